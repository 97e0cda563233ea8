//! Corral example plugin: statistics about a text, as structured content
//! and as a CSV report.

use std::collections::HashMap;

use corral_sdk::{CallResult, Json, ResourceLink, Tool, plugin};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The text to analyse.
#[derive(Deserialize, JsonSchema)]
struct TextArgs {
    /// The text to analyse, in any language; plain text works best.
    text: String,
}

/// Statistics about a text.
#[derive(Debug, Serialize, JsonSchema)]
struct Stats {
    /// Number of Unicode characters (scalar values), including whitespace.
    characters: usize,
    /// Number of words: maximal runs of letters, digits and inner
    /// apostrophes.
    words: usize,
    /// Number of lines; 0 for empty text.
    lines: usize,
    /// Number of sentences: runs of text ended by `.`, `!` or `?`, plus
    /// trailing text without a terminator.
    sentences: usize,
    /// Mean word length in characters, rounded to two decimals; 0 without
    /// words.
    average_word_length: f64,
    /// The five most frequent words (lowercased), most frequent first; ties
    /// in alphabetical order.
    top_words: Vec<WordCount>,
}

/// A word and how often it occurs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
struct WordCount {
    /// The word, lowercased.
    word: String,
    /// How many times it occurs.
    count: usize,
}

/// Splits `text` into words: runs of alphanumeric characters, with
/// apostrophes allowed between them ("don't", "l'homme").
fn words(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let inner_apostrophe = matches!(c, '\'' | '’')
            && start.is_some()
            && chars
                .peek()
                .is_some_and(|&(_, next)| next.is_alphanumeric());
        if c.is_alphanumeric() || inner_apostrophe {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            words.push(&text[s..i]);
        }
    }
    if let Some(s) = start {
        words.push(&text[s..]);
    }
    words
}

fn sentences(text: &str) -> usize {
    let mut count = 0;
    let mut open = false;
    for c in text.chars() {
        if matches!(c, '.' | '!' | '?') {
            if open {
                count += 1;
                open = false;
            }
        } else if c.is_alphanumeric() {
            open = true;
        }
    }
    count + usize::from(open)
}

/// Every distinct word (lowercased) with its count, most frequent first,
/// ties in alphabetical order.
fn frequencies(words: &[&str]) -> Vec<WordCount> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for word in words {
        *counts.entry(word.to_lowercase()).or_default() += 1;
    }
    let mut table: Vec<WordCount> = counts
        .into_iter()
        .map(|(word, count)| WordCount { word, count })
        .collect();
    table.sort_by(|x, y| y.count.cmp(&x.count).then_with(|| x.word.cmp(&y.word)));
    table
}

/// The statistics of `text` and its full word-frequency table.
fn analyze(text: &str) -> (Stats, Vec<WordCount>) {
    let words = words(text);
    let letters: usize = words.iter().map(|w| w.chars().count()).sum();
    let average_word_length = if words.is_empty() {
        0.0
    } else {
        (letters as f64 / words.len() as f64 * 100.0).round() / 100.0
    };
    let table = frequencies(&words);
    let stats = Stats {
        characters: text.chars().count(),
        words: words.len(),
        lines: text.lines().count(),
        sentences: sentences(text),
        average_word_length,
        top_words: table.iter().take(5).cloned().collect(),
    };
    (stats, table)
}

fn analyze_text(args: TextArgs) -> Json<Stats> {
    Json(analyze(&args.text).0)
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn text_report(args: TextArgs) -> CallResult {
    let (stats, table) = analyze(&args.text);
    let mut csv = String::from("word,count\n");
    for WordCount { word, count } in &table {
        // Words never contain commas, quotes or newlines.
        csv.push_str(&format!("{word},{count}\n"));
    }
    let top = stats
        .top_words
        .iter()
        .map(|w| format!("{} ({})", w.word, w.count))
        .collect::<Vec<_>>()
        .join(", ");
    let summary = format!(
        "{}, {} ({} distinct), {}, {}, average word length {}. Most frequent: {}. \
         The attached CSV lists every word with its count.",
        plural(stats.characters, "character"),
        plural(stats.words, "word"),
        table.len(),
        plural(stats.lines, "line"),
        plural(stats.sentences, "sentence"),
        stats.average_word_length,
        if top.is_empty() { "none" } else { &top },
    );
    CallResult::new()
        .text(summary)
        .resource_text("textstats://report.csv", "text/csv", csv)
        .resource_link(
            ResourceLink::new("https://en.wikipedia.org/wiki/Word_count", "word-count")
                .title("Word count (Wikipedia)")
                .description("Background on how words and sentences are counted")
                .mime_type("text/html"),
        )
}

plugin! {
    Tool::new("analyze_text", analyze_text)
        .title("Analyze text")
        .description(
            "Count the characters, words, lines and sentences of a text and find its \
             average word length and five most frequent words. Returns the statistics \
             as structured JSON.",
        )
        .read_only()
        .idempotent()
        .closed_world(),
    Tool::new("text_report", text_report)
        .title("Text report")
        .description(
            "Produce a word-frequency report of a text: a short text summary, a CSV \
             resource (textstats://report.csv, columns word,count, every distinct word, \
             most frequent first) and a link to background reading. Use analyze_text \
             instead when you only need the numbers.",
        )
        .read_only()
        .idempotent()
        .closed_world(),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let Json(s) = analyze_text(TextArgs {
            text: "The cat sat. The cat didn't!\nWhy? the end".into(),
        });
        assert_eq!(s.words, 9);
        assert_eq!(s.lines, 2);
        assert_eq!(s.sentences, 4);
        assert_eq!(s.top_words[0].word, "the");
        assert_eq!(s.top_words[0].count, 3);
        assert_eq!(s.top_words[1].word, "cat");
        assert_eq!(s.top_words.len(), 5);
        let Json(empty) = analyze_text(TextArgs {
            text: String::new(),
        });
        assert_eq!((empty.words, empty.lines, empty.sentences), (0, 0, 0));
        assert_eq!(empty.average_word_length, 0.0);
    }

    #[test]
    fn report() {
        let r = text_report(TextArgs {
            text: "a b a".into(),
        });
        assert_eq!(r.content.len(), 3);
        match &r.content[1] {
            corral_sdk::Content::Resource(res) => {
                assert_eq!(
                    res.contents,
                    corral_sdk::ResourceContents::Text("word,count\na,2\nb,1\n".into())
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
