//! Every back end agrees with the reference interpreter, bit for bit: random programs (NumPy
//! indexing and the operator forms, chained, over every element width; `slc::fuzz`'s generator)
//! through the JIT on one and on several threads. Each plan also round-trips through its text
//! form.

use proptest::prelude::*;
use slc::fuzz::{Case, Rng, check_case};
use slc::{Backend, Session};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]
    #[test]
    fn jit_equals_interpreter(seed in any::<u64>()) {
        let case = Case::draw(&mut Rng::new(seed));
        // One thread, and the plan's text form (panics on a mismatch).
        check_case(&case);
        // Several threads, through sessions as an embedder uses them.
        let mut sessions = [
            (Session::with_backend(Backend::Interp), 1),
            (Session::with_backend(Backend::Jit), 3),
        ];
        let mut results = vec![];
        for (s, threads) in sessions.iter_mut() {
            s.options_mut().threads = *threads;
            for (name, t) in &case.inputs {
                s.bind(name, t.clone());
            }
            results.push(s.eval(&case.src).map_err(|e| e.to_string()));
        }
        prop_assert_eq!(&results[0], &results[1], "{} (threads)", case.src);
    }
}
