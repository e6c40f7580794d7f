//! Generates the parser from `grammar/` into OUT_DIR.
fn main() {
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .set_out_dir(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .emit_rerun_directives(true)
        .process()
        .expect("grammar/ must generate");
}
