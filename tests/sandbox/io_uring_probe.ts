/**
 * The io_uring probe of the sandbox tests: a program of its own (run as a child of a sandboxed
 * block) that calls `io_uring_setup(1, &params)` directly and prints `fd N` or `errno N`.
 */
const libc = Deno.dlopen("libc.so.6", {
  syscall: { parameters: ["i64", "i64", "i64", "i64", "i64", "i64", "i64"], result: "i64" },
  close: { parameters: ["i32"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
});
const params = new Uint8Array(120); // struct io_uring_params
const address = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(params)));
const r = Number(libc.symbols.syscall(425n, 1n, address, 0n, 0n, 0n, 0n));
if (r >= 0) {
  libc.symbols.close(r);
  console.log(`fd ${r}`);
} else {
  console.log(`errno ${new Deno.UnsafePointerView(libc.symbols.__errno_location()!).getInt32()}`);
}
