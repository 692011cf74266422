package version

// Toolchain is the Go release this module is developed with.
const Toolchain = "go1.19"
