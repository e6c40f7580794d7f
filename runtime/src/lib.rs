//! slc-runtime
