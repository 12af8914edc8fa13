//! Properties of the checker over generated machines: every path the machine allows
//! is accepted, and one event injected where the machine has no edge is rejected at
//! exactly that record.

use std::fmt::Write as _;

use proptest::prelude::*;

use crate::util::{check_text, codes_and_lines, spec};

/// A generated machine: `states` states, `events` events (one tool each), and a
/// transition table where `table[s][e]` is the target of `e` in `s`, if any.
#[derive(Debug, Clone)]
struct Generated {
    events: usize,
    table: Vec<Vec<Option<usize>>>,
}

impl Generated {
    fn spec_text(&self) -> String {
        let mut text = String::from("spec generated\n");
        for e in 0..self.events {
            let _ = writeln!(text, "event e{e} = call tool_{e}");
        }
        text.push_str("initial s0\n");
        for (s, row) in self.table.iter().enumerate() {
            for (e, target) in row.iter().enumerate() {
                if let Some(t) = target {
                    let _ = writeln!(text, "s{s} -> s{t} on e{e}");
                }
            }
        }
        text
    }
}

fn machine() -> impl Strategy<Value = Generated> {
    (1usize..6, 1usize..5).prop_flat_map(|(states, events)| {
        proptest::collection::vec(
            proptest::collection::vec(proptest::option::weighted(0.6, 0..states), events),
            states,
        )
        .prop_map(move |table| Generated { events, table })
    })
}

/// Walks the machine from `s0` following `choices`; returns the events taken and the
/// state reached before each of them (and the final state last).
fn walk(machine: &Generated, choices: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut state = 0;
    let mut events = Vec::new();
    let mut states = vec![0];
    for choice in choices {
        let allowed: Vec<(usize, usize)> = machine.table[state]
            .iter()
            .enumerate()
            .filter_map(|(e, t)| t.map(|t| (e, t)))
            .collect();
        if allowed.is_empty() {
            break;
        }
        let (event, target) = allowed[choice % allowed.len()];
        events.push(event);
        state = target;
        states.push(state);
    }
    (events, states)
}

fn trace(events: &[usize]) -> String {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{{\"kind\":\"call\",\"tool\":\"tool_{e}\",\"call_id\":\"c{i}\"}}\n"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_allowed_path_is_accepted(
        generated in machine(),
        choices in proptest::collection::vec(0usize..100, 0..40),
    ) {
        let compiled = spec(&generated.spec_text());
        let (events, _) = walk(&generated, &choices);
        let outcome = check_text(std::slice::from_ref(&compiled), &trace(&events));
        prop_assert!(outcome.diagnostics.is_empty(), "{:#?}", outcome.diagnostics);
        prop_assert_eq!(outcome.records, events.len() as u64);
    }

    #[test]
    fn one_injected_non_edge_is_rejected_at_exactly_that_record(
        generated in machine(),
        choices in proptest::collection::vec(0usize..100, 0..40),
        at in 0usize..100,
        pick in 0usize..100,
    ) {
        let compiled = spec(&generated.spec_text());
        let (mut events, states) = walk(&generated, &choices);
        let index = at % (events.len() + 1);
        let state = states[index];
        let missing: Vec<usize> = (0..generated.events)
            .filter(|&e| generated.table[state][e].is_none())
            .collect();
        prop_assume!(!missing.is_empty());
        events.insert(index, missing[pick % missing.len()]);
        let outcome = check_text(std::slice::from_ref(&compiled), &trace(&events));
        prop_assert_eq!(
            codes_and_lines(&outcome),
            vec![("unexpected-event".to_string(), index as u64 + 1)]
        );
        let detail = outcome.diagnostics[0].violation.as_ref().unwrap();
        prop_assert_eq!(&detail.state, &format!("s{state}"));
        prop_assert_eq!(detail.path.len(), index);
    }
}
