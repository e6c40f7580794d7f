//! The loop nest as text (`slc plan --dump-after`, `slc explain`): its loops, streams and
//! strategies.

use super::{Copy, GatherAhead, LoopNest, NestKind, ReadAhead, Shuffle, Strategy, Stream, Term};
use crate::types::sym::SymExpr;
use std::fmt;

/// `[a, b, ...]`: a list of integers as `Debug` prints a `Vec<i64>`.
struct List<'a>(&'a [SymExpr]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{e}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "buf{}+{} {}", self.buffer, self.base, List(&self.strides))?;
        Terms(&self.terms).fmt(f)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Serial => write!(f, "serial"),
            Strategy::Block(copy) => write!(f, "block {copy}"),
            Strategy::Strided(None) => write!(f, "strided"),
            Strategy::Strided(Some(Shuffle::Reverse)) => write!(f, "strided reverse"),
            Strategy::Strided(Some(Shuffle::Evens)) => write!(f, "strided evens"),
            Strategy::Strided(Some(Shuffle::Spread)) => write!(f, "strided spread"),
            Strategy::GuardedGather(None) => write!(f, "guarded-gather"),
            Strategy::GuardedGather(Some(GatherAhead::Known(a))) => {
                write!(f, "guarded-gather{}", Ahead(&Some(*a)))
            }
            Strategy::GuardedGather(Some(GatherAhead::ByCall)) => {
                write!(f, "guarded-gather (ahead if the call's span qualifies)")
            }
            Strategy::BlockRows { by_size: false } => write!(f, "block-rows"),
            Strategy::BlockRows { by_size: true } => write!(f, "(block-rows if <= 64 B, else serial)"),
            Strategy::IndexTable(ahead) => write!(f, "index-table{}", Ahead(ahead)),
            Strategy::ReversedTiles { by_size: false } => write!(f, "reversed-tiles"),
            Strategy::ReversedTiles { by_size: true } => {
                write!(f, "(reversed-tiles if tiles of 2-8 B, else strided reverse)")
            }
            Strategy::MaskedRun => write!(f, "masked-run"),
            Strategy::MaskedRow { streaming: false } => write!(f, "masked-row"),
            Strategy::MaskedRow { streaming: true } => write!(f, "masked-row streaming"),
            Strategy::Fill { streaming: false } => write!(f, "fill"),
            Strategy::Fill { streaming: true } => write!(f, "fill streaming"),
            Strategy::SpreadAhead => write!(f, "spread ahead"),
            Strategy::TransposeTiles => write!(f, "transpose-tiles"),
            Strategy::Joined => write!(f, "joined"),
        }
    }
}

/// Gathered contributions, each as ` + STRIDE*MODE<LEN>(DTYPE INDEX)`.
struct Terms<'a>(&'a [Term]);

impl fmt::Display for Terms<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for t in self.0 {
            write!(f, " + {}*{}<{}>({} {})", t.stride, t.mode.name(), t.len, t.index_dtype, t.index)?;
        }
        Ok(())
    }
}

/// A strategy's read-ahead, if any, as ` ahead SPAN`.
struct Ahead<'a>(&'a Option<ReadAhead>);

impl fmt::Display for Ahead<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(a) => write!(f, " ahead {}", a.span),
            None => Ok(()),
        }
    }
}

impl fmt::Display for Copy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Copy::Inline => "inline",
            Copy::Loop => "loop",
            Copy::Memcpy => "memcpy",
            Copy::Streaming => "streaming",
            Copy::BySize { loop_copy: true } => "(inline if <= 64 B, loop if <= 256 KiB, else memcpy)",
            Copy::BySize { loop_copy: false } => "(inline if <= 64 B, else memcpy)",
        })
    }
}

impl fmt::Display for LoopNest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            NestKind::Output => "loopnest",
            NestKind::Check => "checknest",
        };
        if self.empty {
            return writeln!(f, "{kind} w{} empty", self.width);
        }
        writeln!(f, "{kind} w{} loops {}", self.width, List(&self.extents))?;
        let strategies: Vec<String> = self.strategies.iter().map(Strategy::to_string).collect();
        writeln!(f, "  run [{}]", strategies.join(", "))?;
        writeln!(f, "  out {}{}", List(&self.out), Terms(&self.out_terms))?;
        writeln!(f, "  data {}", self.data)?;
        if let Some(value) = &self.masked_value {
            writeln!(f, "  where data != 0: value {value}")?;
        }
        if let Some(c) = &self.combine {
            let op = format!("{:?}", c.op).to_lowercase();
            let arithmetic = format!("{:?}", c.arithmetic).to_lowercase();
            match c.accumulate {
                true => writeln!(f, "  combine {op} {arithmetic} into out")?,
                false => writeln!(f, "  combine {op} {arithmetic} with old buf{}+{}", c.target, c.base)?,
            }
        }
        if self.takes_params() {
            writeln!(f, "  params {}", List(&self.params))?;
        }
        Ok(())
    }
}
