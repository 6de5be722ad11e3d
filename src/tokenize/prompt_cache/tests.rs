//! Unit tests of the prompt cache: hits, cut points, budgets and eviction.

use super::*;

#[test]
fn common_prefix_counts_equal_bytes() {
    let a: Vec<u8> = (0..9000u32).map(|i| (i % 251) as u8).collect();
    for cut in [0, 1, 63, 64, 65, 200, 499, 4095, 4096, 4097, 8191, 8999] {
        let mut b = a.clone();
        b[cut] ^= 1;
        assert_eq!(common_prefix(&a, &b), cut);
    }
    assert_eq!(common_prefix(&a, &a[..300]), 300);
    assert_eq!(common_prefix(&a, &a[..5000]), 5000);
    assert_eq!(common_prefix(&a, &a), 9000);
}

fn rules(content: &str) -> AddedTokenRules {
    AddedTokenRules {
        content: content.into(),
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
    }
}

#[test]
fn cut_tokens_follow_the_split_rules() {
    assert!(is_cut_token(&rules("<|im_end|>"), false));
    assert!(!is_cut_token(&rules(" <x>"), false));
    assert!(!is_cut_token(
        &AddedTokenRules {
            rstrip: true,
            ..rules("<x>")
        },
        false
    ));
    assert!(!is_cut_token(
        &AddedTokenRules {
            normalized: true,
            ..rules("<x>")
        },
        false
    ));
    assert!(is_cut_token(&rules("<x>"), true));
    assert!(!is_cut_token(&rules("<x"), true));
    assert!(PromptCache::new(&[rules("<x>")], true, 1 << 20).is_err());
    assert!(PromptCache::new(
        &[AddedTokenRules {
            lstrip: true,
            ..rules("<x>")
        }],
        false,
        1 << 20
    )
    .is_err());
}

/// A toy encoder: one ID per byte, and one per `<x>` (exactly compositional at `<x>`).
fn toy(text: &str) -> Result<Vec<u32>, ()> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<x>") {
            out.push(1000);
            rest = r;
        } else {
            out.push(u32::from(rest.as_bytes()[0]));
            rest = &rest[1..];
        }
    }
    Ok(out)
}

/// [`toy`] as [`PromptCache::encode`] calls its encoder.
fn toy_into(
    text: &str,
    _after_reuse: Option<&[(usize, usize)]>,
    out: &mut Vec<u32>,
) -> Result<(), ()> {
    out.extend(toy(text)?);
    Ok(())
}

/// A first message longer than the key's scan: every turn still gets the same key.
#[test]
fn a_long_opening_keys_on_its_first_bytes() {
    let cache = PromptCache::new(&[rules("<x>")], false, 1 << 20).unwrap();
    let turn1 = format!("<x>{}", "a".repeat(10_000));
    let turn2 = format!("{turn1}<x>{}", "b".repeat(300));
    let turn3 = format!("{turn2}<x>{}", "c".repeat(300));
    for t in [&turn1, &turn2, &turn3] {
        assert_eq!(
            cache.encode(t, None, toy_into).map(Arc::unwrap_or_clone),
            toy(t)
        );
    }
    let st = cache.stats();
    assert_eq!((st.hits, st.misses), (1, 2), "{st:?}");
}

/// After a reused prefix each piece comes with where its added tokens are: every one, in
/// order, piece-relative.
#[test]
fn pieces_after_a_reuse_carry_their_added_tokens() {
    let cache = PromptCache::new(&[rules("<x>"), rules("<long>")], false, 1 << 20).unwrap();
    let turn = |n: usize| -> String {
        (0..n)
            .map(|i| format!("<x>message {i} <long> {}<lo", "a".repeat(300)))
            .collect()
    };
    let mut checked = 0;
    for n in [20, 21, 22, 30] {
        let t = turn(n);
        let ids = cache.encode(&t, None, |piece, after_reuse, out: &mut Vec<u32>| {
            if let Some(added) = after_reuse {
                let mut want: Vec<(usize, usize)> = piece
                    .match_indices("<x>")
                    .chain(piece.match_indices("<long>"))
                    .map(|(i, m)| (i, i + m.len()))
                    .collect();
                want.sort();
                assert_eq!(added, &want[..], "{piece}");
                checked += 1;
            }
            toy_into(piece, None, out)
        });
        assert_eq!(ids.map(Arc::unwrap_or_clone), toy(&t));
    }
    assert!(checked > 2, "{checked}");
}

/// A prompt the caller shares becomes the entry itself; a `shared` that is not the text
/// encoded is not kept in its place.
#[test]
fn a_shared_prompt_is_kept_not_copied() {
    let cache = PromptCache::new(&[rules("<x>")], false, 1 << 20).unwrap();
    let turn = |n: usize| -> Arc<String> {
        Arc::new(
            (0..n)
                .map(|i| format!("<x>message {i} {}", "a".repeat(300)))
                .collect(),
        )
    };
    let kept = |p: &Arc<String>| {
        cache
            .lock()
            .buckets
            .values()
            .flatten()
            .any(|e| Arc::ptr_eq(&e.text, p))
    };
    let (t1, t2, t3) = (turn(20), turn(21), turn(22));
    for t in [&t1, &t2] {
        assert_eq!(
            cache.encode(t, Some(t), toy_into).map(Arc::unwrap_or_clone),
            toy(t)
        );
    }
    assert!(kept(&t2));
    let decoy = Arc::new(t3.to_string());
    assert_eq!(
        cache
            .encode(&t3, Some(&decoy), toy_into)
            .map(Arc::unwrap_or_clone),
        toy(&t3)
    );
    assert!(!kept(&decoy) && !kept(&t3));
    assert_eq!(cache.stats().hits, 1);
}

#[test]
fn turn_two_reuses_turn_one_and_evicts_within_budget() {
    // The toy encoder gives one ID per byte, 4 bytes of IDs per byte of text.
    let cache = PromptCache::new(&[rules("<x>")], false, 128 * 1024).unwrap();
    let turn1: String = (0..40)
        .map(|i| format!("<x>message {i} {}", "a".repeat(300)))
        .collect();
    let turn2 = format!("{turn1}<x>and one more {}", "b".repeat(400));
    let turn3 = format!("{turn2}<x>and the last one {}", "c".repeat(400));
    // Turn 1 is only noted; turn 2 is stored; turn 3 reuses it.
    assert_eq!(
        cache
            .encode(&turn1, None, toy_into)
            .map(Arc::unwrap_or_clone),
        toy(&turn1)
    );
    assert_eq!(cache.stats().entries, 0);
    assert_eq!(
        cache
            .encode(&turn2, None, toy_into)
            .map(Arc::unwrap_or_clone),
        toy(&turn2)
    );
    assert_eq!(
        cache
            .encode(&turn3, None, toy_into)
            .map(Arc::unwrap_or_clone),
        toy(&turn3)
    );
    let st = cache.stats();
    assert_eq!((st.hits, st.misses, st.entries), (1, 2, 1), "{st:?}");
    assert!(st.hit_bytes as usize > turn1.len(), "{st:?}");
    // Unrelated prompts fill the budget; the cache stays within it.
    for i in 0..20 {
        let other = format!("<x>{i}{}", turn1);
        for _ in 0..2 {
            assert_eq!(
                cache
                    .encode(&other, None, toy_into)
                    .map(Arc::unwrap_or_clone),
                toy(&other)
            );
        }
    }
    let st = cache.stats();
    assert!(st.bytes <= st.max_bytes, "{st:?}");
    assert!(st.entries < 20, "{st:?}");
}
