//! Finds the text of one element of a literal, so that an error about element `[3][1]` of
//! a large tensor points at that element rather than at the whole value.
//!
//! The tree keeps no spans inside literals (they would cost memory for every weight); on
//! an error the value's text is lexed again and walked by the element path.

use super::lexer::{lex, Tok, Token};
use anec_ir::mil::Span;

/// The span of the element at `path` inside the value written at `value` in `text`
/// (`type(literal)`); `None` when the text does not have that shape.
pub fn element_span(text: &str, value: Span, path: &[usize]) -> Option<Span> {
    let src = text.get(value.range())?;
    let toks = lex(src);
    let mut i = literal_start(&toks)?;
    for &index in path {
        i = match toks.get(i)?.kind {
            Tok::LBrace => child(&toks, child(&toks, i, index / 2)?, index % 2)?,
            Tok::LBracket | Tok::LParen => child(&toks, i, index)?,
            _ => return None,
        };
    }
    let end = element_end(&toks, i)?;
    let base = value.start as usize;
    Some(Span::new(base + toks.get(i)?.start as usize, base + toks.get(end)?.end as usize))
}

/// Index of the first token of the literal: after the `(` that follows the type.
fn literal_start(toks: &[Token]) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Tok::Lt => depth += 1,
            Tok::Gt => depth -= 1,
            Tok::LParen if depth == 0 => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Index of the first token of child `n` of the bracket opened at `open`.
fn child(toks: &[Token], open: usize, n: usize) -> Option<usize> {
    let mut i = open + 1;
    for _ in 0..n {
        i = element_end(toks, i)? + 1;
        if toks.get(i)?.kind != Tok::Comma {
            return None;
        }
        i += 1;
    }
    Some(i)
}

/// Index of the last token of the element starting at `start` (brackets balanced, up to
/// a `,` or a closing bracket at depth zero).
fn element_end(toks: &[Token], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(start) {
        match t.kind {
            Tok::LBracket | Tok::LParen | Tok::LBrace => depth += 1,
            Tok::RBracket | Tok::RParen | Tok::RBrace if depth == 0 => return i.checked_sub(1),
            Tok::RBracket | Tok::RParen | Tok::RBrace => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            Tok::Comma if depth == 0 => return i.checked_sub(1),
            Tok::Eof => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn at<'t>(text: &'t str, path: &[usize]) -> &'t str {
        let span = element_span(text, Span::new(0, text.len()), path).expect("found");
        &text[span.range()]
    }

    #[test]
    fn finds_nested_elements() {
        let t = "tensor<int32, [2, 2]>([[1, -2], [3, \"x\"]])";
        assert_eq!(at(t, &[]), "[[1, -2], [3, \"x\"]]");
        assert_eq!(at(t, &[0, 1]), "-2");
        assert_eq!(at(t, &[1]), "[3, \"x\"]");
        assert_eq!(at(t, &[1, 1]), "\"x\"");
        assert!(element_span(t, Span::new(0, t.len()), &[2]).is_none());
    }

    #[test]
    fn finds_dict_and_tuple_parts() {
        let t = "tuple<string, dict<string, tensor<int32, [?]>>>((\"a\", {{\"k\", [1, 2]}, {\"m\", [3]}}))";
        assert_eq!(at(t, &[1, 3]), "[3]");
        assert_eq!(at(t, &[1, 2]), "\"m\"");
        assert_eq!(at(t, &[1, 1, 0]), "1");
    }
}
