fn main() -> std::process::ExitCode {
    slc::cli::main()
}
