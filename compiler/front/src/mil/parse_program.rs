//! The program structure: `program(V) [attrs] { func ... }`, functions and statements.

use super::lexer::Tok;
use super::parser::{error, PResult, Parser};
use anec_ir::mil::{Function, Ident, Param, Program, Span, Stmt};

impl Parser<'_> {
    /// `program(V) [attrs]? { function* }` and the end of the text.
    pub fn parse_program(&mut self) -> PResult<Program> {
        self.expect_word("program")?;
        self.open(Tok::LParen, "`(`")?;
        let v = self.peek();
        if !matches!(v.kind, Tok::DecFloat | Tok::Int) {
            return Err(self.unexpected("a program version such as `1.0`"));
        }
        let version = self.slice(v).to_string();
        self.bump();
        self.close(Tok::RParen, "`)`")?;
        let attrs = if self.at(Tok::LBracket) { self.attrs()? } else { Vec::new() };
        self.open(Tok::LBrace, "`{`")?;
        let mut functions = Vec::new();
        while !self.at(Tok::RBrace) {
            if !self.at_word("func") {
                return Err(self.unexpected("`func` or `}`"));
            }
            functions.push(self.function()?);
        }
        self.close(Tok::RBrace, "`}`")?;
        if !self.at(Tok::Eof) {
            let t = self.peek();
            let msg = format!("unexpected {} after the end of the program", self.describe(t));
            return Err(error(Self::span(t), msg, "the program ended at the `}` before"));
        }
        Ok(Program { version, attrs, functions })
    }

    /// `func NAME<opset>(inputs) [attrs]? { stmt* } -> (outputs);`
    fn function(&mut self) -> PResult<Function> {
        let start = self.bump().start;
        let name = self.ident("a function name")?.name;
        self.open(Tok::Lt, "`<` (the opset, e.g. `<ios17>`)")?;
        let opset = self.ident("an opset name such as `ios17`")?.name;
        self.close(Tok::Gt, "`>`")?;
        let span = Span { start, end: self.prev_end() };
        let inputs = self.params()?;
        let attrs = if self.at(Tok::LBracket) { self.attrs()? } else { Vec::new() };
        self.open(Tok::LBrace, "`{`")?;
        let mut body = Vec::new();
        while !self.at(Tok::RBrace) {
            body.push(self.stmt()?);
        }
        self.close(Tok::RBrace, "`}`")?;
        if !self.at(Tok::Arrow) {
            let mut e = self.unexpected("`->` after the function body");
            e.note = Some("a function ends with `} -> (outputs);`".into());
            return Err(e);
        }
        self.bump();
        let outputs = self.outputs()?;
        self.expect(Tok::Semi, "`;`")?;
        Ok(Function { name, opset, inputs, attrs, body, outputs, span })
    }

    /// `(type name, ...)`.
    fn params(&mut self) -> PResult<Vec<Param>> {
        self.open(Tok::LParen, "`(` (the function inputs)")?;
        let mut out = Vec::new();
        if !self.at(Tok::RParen) {
            loop {
                out.push(self.param()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.close(Tok::RParen, "`,` or `)`")?;
        Ok(out)
    }

    /// `type name`.
    fn param(&mut self) -> PResult<Param> {
        let ty = self.parse_type()?;
        let name = self.ident("a variable name")?;
        Ok(Param { ty, name })
    }

    /// `(name, ...)` after `->`.
    fn outputs(&mut self) -> PResult<Vec<Ident>> {
        self.open(Tok::LParen, "`(` (the function outputs)")?;
        let mut out = Vec::new();
        if !self.at(Tok::RParen) {
            loop {
                out.push(self.ident("an output name")?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.close(Tok::RParen, "`,` or `)`")?;
        Ok(out)
    }

    /// `[type name, ... =] op(kwargs) [attrs]? ;`
    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.peek().start;
        let mut outputs = Vec::new();
        let bare_call = self.at(Tok::Ident) && self.nth(1).kind == Tok::LParen;
        if !bare_call {
            if !self.at(Tok::Ident) {
                return Err(self.unexpected("a statement or `}`"));
            }
            loop {
                outputs.push(self.param()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::Eq, "`=` or `,`")?;
        }
        let op = self.ident("an operator name")?;
        self.open(Tok::LParen, "`(` (the operator inputs)")?;
        let inputs = self.kwargs(Tok::RParen)?;
        self.close(Tok::RParen, "`,` or `)`")?;
        let attrs = if self.at(Tok::LBracket) { self.attrs()? } else { Vec::new() };
        let semi = self.expect(Tok::Semi, "`;`")?;
        Ok(Stmt { outputs, op, inputs, attrs, span: Span { start, end: semi.end } })
    }
}
