/**
 * The socket probe of the sandbox tests: a program of its own (run as a child of a sandboxed
 * block) that calls `socket(family, type, protocol)` directly and, given a port, connects it to
 * 127.0.0.1:port. Prints `connected`, `socket` (made, no port given) or `errno N (at step)`.
 * Usage: `deno run -A socket_probe.ts FAMILY TYPE PROTOCOL [PORT]` (numbers).
 */
const libc = Deno.dlopen("libc.so.6", {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  connect: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
});
const errno = () => new Deno.UnsafePointerView(libc.symbols.__errno_location()!).getInt32();
const [family, type, protocol, port] = Deno.args.map(Number);
const fd = libc.symbols.socket(family, type, protocol);
if (fd < 0) {
  console.log(`errno ${errno()} (socket)`);
} else if (!port) {
  libc.symbols.close(fd);
  console.log("socket");
} else {
  const addr = new Uint8Array(16); // struct sockaddr_in: family, port (big-endian), 127.0.0.1
  const v = new DataView(addr.buffer);
  v.setUint16(0, 2, true);
  v.setUint16(2, port, false);
  addr.set([127, 0, 0, 1], 4);
  const r = libc.symbols.connect(fd, addr, 16);
  console.log(r === 0 ? "connected" : `errno ${errno()} (connect)`);
  libc.symbols.close(fd);
}
