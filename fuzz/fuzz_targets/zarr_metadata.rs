#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| slc::fuzz::zarr_metadata(data));
