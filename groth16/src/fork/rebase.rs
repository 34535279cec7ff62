//! The sequential form of a fork, in any constraint system: part 0 as it is, then each later
//! part with its copy of the prefix identified with part 0's (its variables are part 0's,
//! its constraints dropped, its values checked against part 0's), so the system sees the
//! whole circuit's layout: the prefix once, then every part's rest in order.

use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

use crate::synthesis::counts::Counts;

/// Part 0's prefix as the parent system gave it: each variable, with its value where the
/// parent took a witness (it called the value closure).
pub(crate) struct PrefixRecord<S> {
    aux: Vec<(Variable, Option<S>)>,
    inputs: Vec<(Variable, Option<S>)>,
}

impl<S> PrefixRecord<S> {
    pub(crate) fn new() -> Self {
        PrefixRecord {
            aux: Vec::new(),
            inputs: Vec::new(),
        }
    }
}

/// A constraint system over `parent` for one part (see the module docs).
pub(crate) struct Rebase<'a, S: PrimeField, CS: ConstraintSystem<S>> {
    parent: &'a mut CS,
    prefix: Counts,
    record: &'a mut PrefixRecord<S>,
    part: usize,
    seen: Counts,
}

impl<'a, S: PrimeField, CS: ConstraintSystem<S>> Rebase<'a, S, CS> {
    /// Part `part` of a fork whose prefix holds `prefix`; part 0 fills `record`, the others
    /// read it.
    pub(crate) fn new(
        parent: &'a mut CS,
        prefix: Counts,
        record: &'a mut PrefixRecord<S>,
        part: usize,
    ) -> Self {
        Rebase {
            parent,
            prefix,
            record,
            part,
            seen: Counts::default(),
        }
    }

    /// Fails unless the part went through the whole prefix (it repeats it first).
    pub(crate) fn finish(self) -> Result<(), SynthesisError> {
        let (seen, prefix) = (self.seen, self.prefix);
        if seen.aux < prefix.aux
            || seen.inputs < prefix.inputs
            || seen.constraints < prefix.constraints
        {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "fork part {}: {seen:?} is less than the prefix's {prefix:?}",
                self.part
            )));
        }
        Ok(())
    }

    /// The variable the `index`-th prefix allocation of a later part stands for, its value
    /// (from `f`) checked against part 0's where the parent took one.
    fn prefix_variable<F>(
        part: usize,
        recorded: &[(Variable, Option<S>)],
        index: usize,
        kind: &str,
        f: F,
    ) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
    {
        let (variable, value) = recorded.get(index).copied().ok_or_else(|| {
            SynthesisError::IncompatibleLengthVector(format!(
                "fork part {part}: prefix {kind} {index} before part 0 allocated it"
            ))
        })?;
        if let Some(expected) = value {
            if !bool::from(f()?.ct_eq(&expected)) {
                log::error!("fork part {part}: prefix {kind} {index} differs from part 0's");
                return Err(SynthesisError::Unsatisfiable);
            }
        }
        Ok(variable)
    }
}

impl<S: PrimeField, CS: ConstraintSystem<S>> ConstraintSystem<S> for Rebase<'_, S, CS> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let index = self.seen.aux;
        self.seen.aux += 1;
        match (index < self.prefix.aux, self.part) {
            (false, _) => self.parent.alloc(annotation, f),
            (true, 0) => {
                let mut value = None;
                let variable = self.parent.alloc(annotation, || {
                    let v = f()?;
                    value = Some(v);
                    Ok(v)
                })?;
                self.record.aux.push((variable, value));
                Ok(variable)
            }
            (true, part) => Self::prefix_variable(part, &self.record.aux, index, "variable", f),
        }
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let index = self.seen.inputs;
        self.seen.inputs += 1;
        match (index < self.prefix.inputs, self.part) {
            (false, _) => self.parent.alloc_input(annotation, f),
            (true, 0) => {
                let mut value = None;
                let variable = self.parent.alloc_input(annotation, || {
                    let v = f()?;
                    value = Some(v);
                    Ok(v)
                })?;
                self.record.inputs.push((variable, value));
                Ok(variable)
            }
            (true, part) => Self::prefix_variable(part, &self.record.inputs, index, "input", f),
        }
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LB: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LC: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    {
        let index = self.seen.constraints;
        self.seen.constraints += 1;
        // A later part's prefix constraints are part 0's over the same variables.
        if self.part == 0 || index >= self.prefix.constraints {
            self.parent.enforce(annotation, a, b, c);
        }
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        self.parent.get_root().push_namespace(name_fn);
    }

    fn pop_namespace(&mut self) {
        self.parent.get_root().pop_namespace();
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
