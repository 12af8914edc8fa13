//! The README's 30-second example, run: the command it shows prints exactly the output
//! block under it and exits with the status the text names, and the spec and trace
//! excerpts above it are taken, line for line and in order, from the files they name.

use crate::util::{root, run, stdout};

/// The README's section with this heading, up to the next `## ` heading.
fn section(readme: &str, heading: &str) -> String {
    let start = readme
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no section {heading:?}"));
    let body = &readme[start + 1..];
    let end = body[heading.len()..]
        .find("\n## ")
        .map_or(body.len(), |at| heading.len() + at + 1);
    body[..end].to_string()
}

/// A fenced block with the last prose paragraph before it.
struct Block {
    lead: String,
    lines: Vec<String>,
}

/// The fenced blocks of `text`, each with the paragraph before it.
fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut after_blank = false;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            let body: Vec<String> = lines
                .by_ref()
                .take_while(|l| !l.starts_with("```"))
                .map(str::to_string)
                .collect();
            found.push(Block {
                lead: paragraph.join("\n"),
                lines: body,
            });
            paragraph.clear();
        } else if line.trim().is_empty() {
            after_blank = true;
        } else {
            if after_blank {
                paragraph.clear();
                after_blank = false;
            }
            paragraph.push(line);
        }
    }
    found
}

/// The one backquoted path in `lead` that ends with `extension`.
fn named_file(lead: &str, extension: &str) -> String {
    let names: Vec<&str> = lead
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| name.ends_with(extension))
        .collect();
    assert_eq!(
        names.len(),
        1,
        "expected one `*{extension}` path in: {lead}"
    );
    names[0].to_string()
}

/// Asserts that the shown lines (blank ones aside) are lines of `path`, in order.
fn assert_excerpt_of(shown: &[String], path: &str) {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let mut file = text.lines();
    for line in shown.iter().filter(|l| !l.trim().is_empty()) {
        assert!(
            file.any(|l| l == line),
            "README shows a line that is not in {path} (or not in this order):\n{line}"
        );
    }
}

fn thirty_second_example() -> Vec<Block> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let blocks = blocks(&section(&readme, "## A 30-second example"));
    assert_eq!(blocks.len(), 3, "a spec, a trace and a command");
    blocks
}

#[test]
fn the_spec_excerpt_is_taken_from_the_shipped_spec() {
    let blocks = thirty_second_example();
    let spec = &blocks[0];
    let path = named_file(&spec.lead, ".tg");
    assert!(spec.lead.contains("shortened"), "{}", spec.lead);
    assert!(spec.lines.len() > 10, "the excerpt shows the spec's rules");
    assert_excerpt_of(&spec.lines, &path);
}

#[test]
fn the_trace_excerpt_is_the_start_of_the_shipped_trace() {
    let blocks = thirty_second_example();
    let trace = &blocks[1];
    let path = named_file(&trace.lead, ".jsonl");
    let (last, shown) = trace.lines.split_last().expect("the trace block is empty");
    assert_eq!(last, "...", "the excerpt ends with `...`");
    let text = std::fs::read_to_string(root().join(&path)).unwrap();
    let start: Vec<&str> = text.lines().take(shown.len()).collect();
    assert_eq!(shown, start.as_slice(), "{path}");
    assert!(
        text.lines().count() > shown.len(),
        "{path} is not shortened"
    );
}

#[test]
fn the_command_prints_the_output_shown() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let example = section(&readme, "## A 30-second example");
    let blocks = thirty_second_example();
    let (command, expected) = blocks[2]
        .lines
        .split_first()
        .expect("the command block is empty");
    let command = command
        .strip_prefix("$ tracegate ")
        .unwrap_or_else(|| panic!("not a tracegate command: {command}"));
    // Split on whitespace, so the command must not rely on shell quoting.
    assert!(!command.contains(['"', '\'', '\\']), "{command}");
    let args: Vec<&str> = command.split_whitespace().collect();

    // The spec and trace the command checks are the ones the excerpts name.
    assert!(args.contains(&named_file(&blocks[0].lead, ".tg").as_str()));
    assert!(args.contains(&named_file(&blocks[1].lead, ".jsonl").as_str()));

    let output = run(&args);
    let mut want = expected.join("\n");
    want.push('\n');
    assert_eq!(stdout(&output), want, "README.md drifted from `{command}`");
    assert!(output.stderr.is_empty(), "{output:?}");

    let status = example
        .split("The exit status is ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.trim().parse::<i32>().ok())
        .expect("the README names the exit status");
    assert_eq!(output.status.code(), Some(status));
}
