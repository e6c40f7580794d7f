//! The index checks the host runs before dispatch: the plan's checks over dynamic indices, and
//! guards for `error`-mode gathers no plan check covers.

use super::*;

impl Lowering<'_> {
    /// The plan's checks, run by the host before dispatch. Checks of constant indices, gathered
    /// through other constants or not, are decided now.
    pub(super) fn host_checks(&mut self) -> Result<(), DmlError> {
        for (i, check) in self.plan.checks.iter().enumerate() {
            let index = Acc::from_plan(&check.index);
            if let (BufferId::Const(k), true) = (check.index.buffer, self.host_known(&index)) {
                let t = &self.plan.consts[k].tensor;
                each_coord(&check.shape, |c| {
                    let at = self.host_address(&index, c)?;
                    let v = t.int_at(at as usize).unwrap_or_default();
                    if OobMode::Error.normalize(v, check.len).is_err() {
                        return Err(DmlError::Unsupported(format!(
                            "the constant index {v} is out of range for axis {} with size {}",
                            check.axis, check.len
                        )));
                    }
                    Ok(())
                })?;
                continue;
            }
            let index = self.host_access(&index)?;
            let shape = check.shape.clone();
            let kind = HostCheckKind::PlanCheck(i);
            self.parts.checks.push(HostCheck { kind, index, shape, len: check.len, axis: check.axis });
        }
        Ok(())
    }

    pub(super) fn host_access(&mut self, acc: &Acc) -> Result<HostAccess, DmlError> {
        let source = match acc.src {
            Src::Plan(BufferId::Input(i)) => BindingSource::Input(i),
            Src::Plan(BufferId::Const(k)) => BindingSource::Constant(self.plan_const(k)),
            _ => return Err(DmlError::Unsupported("a checked index read from an intermediate".into())),
        };
        let mut terms = vec![];
        for t in &acc.terms {
            let index = self.host_access(&t.index)?;
            terms.push(HostTerm { index, len: t.len, stride: t.stride, mode: t.mode });
        }
        Ok(HostAccess { source, base: acc.base, strides: acc.strides.clone(), terms })
    }

    /// Makes sure every value an `error`-mode term reads is validated before dispatch: a plan
    /// check over the whole index tensor covers it, otherwise a guard is added.
    pub(super) fn guard(&mut self, t: &Term, shape: &[i64]) -> Result<(), DmlError> {
        let covered = t.index.terms.is_empty()
            && self.plan.checks.iter().any(|c| {
                let whole = self.shape_of(t.index.src);
                Src::Plan(c.index.buffer) == t.index.src
                    && c.index.terms.is_empty()
                    && c.len == t.len
                    && c.index.base == 0
                    && c.shape.iter().product::<i64>() == whole.iter().product::<i64>()
                    && c.shape
                        .iter()
                        .zip(c.index.strides.iter().zip(packed_strides(&c.shape)))
                        .all(|(&n, (&s, p))| n == 1 || s == p)
            });
        let covered =
            covered || self.plan.checks.iter().any(|c| gather_nd::covers(c, &t.index, t.len, shape));
        if !covered {
            let index = self.host_access(&t.index)?;
            let kind = HostCheckKind::Guard;
            self.parts.checks.push(HostCheck { kind, index, shape: shape.to_vec(), len: t.len, axis: 0 });
        }
        Ok(())
    }

    pub(super) fn plan_const(&mut self, k: usize) -> usize {
        if let Some(&(_, c)) = self.parts.plan_consts.iter().find(|(p, _)| *p == k) {
            return c;
        }
        let t = &self.plan.consts[k].tensor;
        let values = (0..t.numel()).map(|i| t.int_at(i).unwrap_or_default() as i64).collect();
        self.parts.constants.push(Constant { data_type: natural_type(t.dtype()), values });
        let c = self.parts.constants.len() - 1;
        self.parts.plan_consts.push((k, c));
        c
    }
}
