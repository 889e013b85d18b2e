use super::*;

/// Unit arrays from tokens and the indices of each flag.
fn arrays(tokens: &[i64], section: &[usize], heading: &[usize], atomic: &[usize]) -> UnitArrays {
    let n = tokens.len();
    let flag = |set: &[usize]| (0..n).map(|i| set.contains(&i)).collect::<Vec<_>>();
    UnitArrays {
        tokens: tokens.to_vec(),
        section: if section.is_empty() {
            vec![0; n]
        } else {
            section.to_vec()
        },
        heading: flag(heading),
        atomic: flag(atomic),
        image: vec![false; n],
        overlap_ok: flag(heading).iter().map(|h| !h).collect(),
        filler: flag(heading),
    }
}

/// `a` with unit `i` an image.
fn with_image(mut a: UnitArrays, i: usize) -> UnitArrays {
    a.image[i] = true;
    a.overlap_ok[i] = false;
    a
}

fn limits(cap: &[i64], target: i64, min_tokens: i64, overlap: i64) -> Limits<'_> {
    Limits {
        cap,
        target,
        min_tokens,
        overlap,
    }
}

fn units_of(groups: &[Group]) -> Vec<Vec<usize>> {
    groups.iter().map(|g| g.units.clone()).collect()
}

#[test]
fn sections_never_share_content() {
    let a = arrays(&[5, 10, 5, 10], &[0, 0, 1, 1], &[0, 2], &[]);
    let groups = pack(&a.units(), &limits(&[100, 100], 50, 0, 0), None);
    assert_eq!(units_of(&groups), [vec![0, 1], vec![2, 3]]);
}

#[test]
fn packs_toward_target_with_overlap() {
    let a = arrays(&[30; 6], &[], &[], &[]);
    let groups = pack(&a.units(), &limits(&[100], 70, 0, 35), None);
    assert_eq!(
        units_of(&groups),
        [vec![0, 1], vec![1, 2], vec![3, 4], vec![4, 5]]
    );
    let laps: Vec<usize> = groups.iter().map(|g| g.overlap).collect();
    assert_eq!(laps, [0, 1, 0, 1]);
    assert_eq!(groups[1].tokens, 61);
    // overlap 30 cannot carry a 30-token unit plus its separator
    let groups = pack(&a.units(), &limits(&[100], 70, 0, 30), None);
    assert_eq!(units_of(&groups), [vec![0, 1], vec![2, 3], vec![4, 5]]);
}

#[test]
fn a_section_within_its_cap_stays_whole() {
    let a = arrays(&[30; 3], &[], &[], &[]);
    let groups = pack(&a.units(), &limits(&[100], 40, 0, 0), None);
    assert_eq!(units_of(&groups), [vec![0, 1, 2]]);
    assert_eq!(
        groups,
        pack_full(&a.units(), &limits(&[100], 40, 0, 0), None)
    );
}

#[test]
fn an_atomic_block_stays_with_its_heading_up_to_the_cap() {
    let a = arrays(&[5, 50, 5, 80, 60], &[], &[0, 2], &[3]);
    let groups = pack(&a.units(), &limits(&[100], 60, 0, 0), None);
    assert_eq!(units_of(&groups), [vec![0, 1], vec![2, 3], vec![4]]);
}

#[test]
fn images_are_chunks_of_their_own() {
    let a = with_image(arrays(&[5, 10, 0, 10], &[], &[0], &[]), 2);
    let groups = pack(&a.units(), &limits(&[100], 50, 0, 0), None);
    assert_eq!(units_of(&groups), [vec![0, 1, 3], vec![2]]);
    assert_eq!((groups[0].image, groups[1].image), (false, true));
    assert_eq!((groups[0].tokens, groups[1].tokens), (27, 0));
}

#[test]
fn a_heading_only_chunk_merges_forward() {
    let a = arrays(&[3, 3, 40], &[0, 1, 1], &[0, 1], &[]);
    let groups = pack(&a.units(), &limits(&[100, 100], 30, 0, 0), None);
    assert_eq!(units_of(&groups), [vec![0, 1, 2]]);
}

#[test]
fn a_small_tail_merges_back_within_its_section() {
    let a = arrays(&[65, 65, 10], &[], &[], &[]);
    let groups = pack(&a.units(), &limits(&[100], 70, 30, 0), None);
    assert_eq!(units_of(&groups), [vec![0], vec![1, 2]]);
}

#[test]
fn a_subsection_that_fits_a_chunk_of_its_own_is_not_cut_after_its_intro() {
    let a = arrays(&[5, 60, 5, 10, 50], &[], &[0, 2], &[4]);
    let groups = pack(&a.units(), &limits(&[120], 100, 20, 0), None);
    assert_eq!(units_of(&groups), [vec![0, 1], vec![2, 3, 4]]);
    let a = arrays(&[5, 60, 5, 10, 50, 50], &[], &[0, 2], &[4, 5]);
    let groups = pack(&a.units(), &limits(&[120], 100, 20, 0), None);
    assert_eq!(groups[0].units, [0, 1, 2, 3]);
}

#[test]
fn sibling_sections_share_a_chunk_up_to_the_target() {
    // sections 1 and 2 are children of section 0, section 3 follows at the top
    let a = arrays(
        &[5, 10, 5, 10, 5, 10, 5, 10],
        &[0, 0, 1, 1, 2, 2, 3, 3],
        &[0, 2, 4, 6],
        &[],
    );
    let parents = [
        Some(Parent::Root),
        Some(Parent::Section(0)),
        Some(Parent::Section(0)),
        Some(Parent::Root),
    ];
    let lim = limits(&[100; 4], 40, 0, 0);
    assert_eq!(pack(&a.units(), &lim, None).len(), 4);
    let groups = pack(&a.units(), &lim, Some(&parents));
    // 0 and 1 make 32, 2 would make 48 > 40; 3 is not below 2's parent (0)
    assert_eq!(
        units_of(&groups),
        [vec![0, 1, 2, 3], vec![4, 5], vec![6, 7]]
    );
    // a preamble (no parent) takes no siblings
    let parents = [
        None,
        Some(Parent::Root),
        Some(Parent::Root),
        Some(Parent::Root),
    ];
    let groups = pack(&a.units(), &lim, Some(&parents));
    assert_eq!(
        units_of(&groups),
        [vec![0, 1], vec![2, 3, 4, 5], vec![6, 7]]
    );
}

#[test]
fn a_small_subsection_joins_its_section_up_to_the_cap() {
    let a = arrays(&[5, 40, 5, 5], &[0, 0, 1, 1], &[0, 2], &[]);
    let parents = [Some(Parent::Root), Some(Parent::Section(0))];
    // 46 + 1 + 11 = 58 passes the target 50 but not the cap, and 11 < min_tokens
    let groups = pack(&a.units(), &limits(&[60, 60], 50, 20, 0), Some(&parents));
    assert_eq!(units_of(&groups), [vec![0, 1, 2, 3]]);
    assert_eq!(groups[0].tokens, 58);
}

#[test]
fn runs_reach_the_next_heading() {
    let a = arrays(&[5, 10, 20, 5, 7], &[0, 0, 0, 0, 1], &[0, 3], &[]);
    assert_eq!(runs(&a.units()), [32, 21, 0, 0, 0]);
}

#[test]
fn bad_arrays_are_refused() {
    let a = arrays(&[5, 10], &[0, 1], &[], &[]);
    assert!(check(&a.units(), &limits(&[100, 100], 50, 0, 0), None).is_ok());
    assert!(check(&a.units(), &limits(&[100], 50, 0, 0), None).is_err());
    let parents = [Some(Parent::Root), Some(Parent::Section(2))];
    assert!(check(&a.units(), &limits(&[100, 100], 50, 0, 0), Some(&parents)).is_err());
    assert!(check(
        &a.units(),
        &limits(&[100, 100], 50, 0, 0),
        Some(&parents[..1])
    )
    .is_err());
}
