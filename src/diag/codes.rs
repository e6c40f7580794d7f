//! The registry of diagnostic codes: every code slc reports, with what it means. The table in
//! docs/robustness.md is this list, and every code the sources use is in it (tests/error_codes.rs).
//! The first digit after `E0` says the stage: 0 text, 1 checking, 2 running, 3 the plan,
//! 4 DirectML, 5 the REPL.

/// `(code, meaning)`, in order.
pub const CODES: &[(&str, &str)] = &[
    ("E0001", "a character that starts no token; an integer literal above 2⁶⁴ − 1; an unterminated string"),
    ("E0002", "a token the grammar does not allow here, or the text ends mid-statement"),
    ("E0003", "the program text is longer than 1 MiB"),
    ("E0004", "an expression nests more than 256 levels deep"),
    ("E0101", "unknown name (with a suggestion or the bound names)"),
    ("E0102", "an integer index out of range for its axis (also shrink entries, constant index lists)"),
    ("E0103", "more indices than the tensor has axes"),
    ("E0104", "two ellipses in one index"),
    ("E0105", "a slice, stride or step of 0"),
    ("E0106", "not an integer where one is needed: a float, a non-integer index tensor"),
    ("E0107", "a boolean mask whose shape does not match the axes it covers"),
    ("E0108", "index arrays whose shapes cannot be broadcast together"),
    ("E0109", "integer overflow in program arithmetic; a literal out of the i64 range"),
    ("E0110", "division or modulo by zero"),
    ("E0111", "a ragged list literal"),
    ("E0112", "an unknown attribute"),
    ("E0113", "an unknown function"),
    ("E0114", "indexing something that cannot be indexed"),
    ("E0115", "the program has no result (its last statement is a `let`)"),
    ("E0116", "a result with more elements than i64 counts"),
    ("E0117", "a result that is not a tensor (a string)"),
    ("E0118", "the program nests more than 256 levels deep once its `let`s are substituted"),
    ("E0119", "a tensor of more than 64 dimensions"),
    ("E0120", "a positional argument after a keyword argument"),
    ("E0121", "too many arguments"),
    ("E0122", "an unknown keyword argument"),
    ("E0123", "an argument given twice"),
    ("E0124", "a required argument missing"),
    ("E0125", "an invalid argument of an operator form (mask values, lengths, axes, windows, modes)"),
    ("E0126", "an operator parameter or a boolean mask whose value is not known when the program is checked"),
    ("E0127", "the program grows beyond 65 536 nodes once its `let`s are substituted"),
    ("E0128", "an input type with a negative dimension or more bytes than i64 counts"),
    (
        "E0129",
        "a value needed when the program is checked depends on a symbolic dim (the tuple length of `gather_nd`'s indices, which sets the output's rank; an operator parameter computed from a shape): the message names the dim to make constant",
    ),
    (
        "E0130",
        "a run-time integer (a scalar input, a symbolic dim's `.shape`/`.size`) where a compile-time integer is needed (a step, an axis, a mask bit)",
    ),
    (
        "E0131",
        "an assignment whose target is not a bound input subscripted (`a = v`, `f(a)[0] = v`, a `let` name, a subscript after an index array)",
    ),
    ("E0132", "a statement after an assignment (a store is the program's last statement)"),
    ("E0133", "a stored value whose shape does not broadcast to the selection's (NumPy's ValueError)"),
    (
        "E0134",
        "a stored value the target's dtype cannot take as NumPy takes it: a float literal (or a 0-d float bound by name) with no integer value stored into integers (NaN), a tensor `+=`/`*=` NumPy computes in another dtype (a float into integers, a signed integer into unsigned ones, anything but bool into bools, a wider float), a float list element or a float bound by name the target cannot hold exactly, or a scatter's updates of another dtype",
    ),
    (
        "E0135",
        "a literal, or a Python `int` or `float` bound by name, that the target's integer dtype does not hold (an infinity included) where a store converts it by its value (NumPy's OverflowError)",
    ),
    (
        "E0201",
        "a value of an index tensor out of range (NumPy's IndexError), pointing at the index expression",
    ),
    ("E0202", "clamp or wrap on an empty axis; an index out of range that no check covered"),
    (
        "E0203",
        "inputs that do not match the plan or kernel (count, dtype, shape), an input no tensor is bound to, or a wrong output tensor",
    ),
    ("E0204", "memory for a tensor could not be had"),
    ("E0205", "the JIT could not generate code for this machine"),
    ("E0206", "a view or buffer that does not fit (strides, bounds, length, NULL data)"),
    ("E0207", "the result is larger than the output bound"),
    (
        "E0208",
        "inputs a shape-generic kernel cannot take: a condition of its shape function fails (an index beyond a symbolic axis, dims that must agree, sizes that overflow)",
    ),
    (
        "E0209",
        "the CUDA back end could not run: no driver or NVRTC, a kernel NVRTC refused, a driver call that failed",
    ),
    ("E0210", "a plan the chosen executor cannot run (a store combining complex numbers on the GPU)"),
    (
        "E0211",
        "a stored value of another dtype with an element the target's has no value for (a float outside an integer's range, NaN, an infinity: NumPy's cast is undefined)",
    ),
    (
        "E0299",
        "internal: an address outside a buffer (verification makes this unreachable; reported, never a crash)",
    ),
    ("E0301", "address arithmetic of an expression overflows i64"),
    ("E0302", "an invalid plan (malformed, or addressing outside a buffer)"),
    ("E0303", "plan text that does not parse"),
    ("E0304", "the fused plan needs more than 65 536 buffer accesses"),
    ("E0401", "an operator or a graph not available at the DirectML feature level"),
    ("E0402", "too many dimensions for DirectML"),
    ("E0403", "a data type DirectML cannot move"),
    ("E0404", "an index type DirectML does not accept"),
    ("E0405", "an out-of-range policy DirectML cannot reproduce"),
    ("E0406", "a size beyond DirectML's 32-bit fields"),
    ("E0407", "a plan shape the DirectML lowering does not handle"),
    (
        "E0503",
        "a REPL file operation failed (`load`, `save`, `:load`, `:save`, or reading the chunks of a Zarr array bound lazily), naming the file (the store and chunk key)",
    ),
    ("E0504", "`save(...)` used as a value"),
    ("E0505", "a REPL helper could not make its tensor"),
    ("E0506", "an unknown REPL command"),
    ("E0507", "a REPL command used wrongly"),
    ("E0508", "a script run by `slc run` rebinds (`let`, `:load`) an input given with `-i`"),
    ("E0599", "internal: a REPL entry panicked; the session and its bindings are kept"),
];

/// What `code` means, if it is one of slc's.
pub fn meaning(code: &str) -> Option<&'static str> {
    CODES.iter().find(|(c, _)| *c == code).map(|(_, m)| *m)
}
