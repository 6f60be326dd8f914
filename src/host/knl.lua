--- The knl syscall table: hands the host's `@knl_*` primitives to the sealed `knl` module as
-- `require("knl.host")`. Nothing else sees them; the kernel's public surface is `knl` itself.
local _, H = ...
package.loaded["knl.host"] = {
  open = H.knl_open,
  session_open = H.knl_session_open,
  session_close = H.knl_session_close,
  append = H.knl_append,
  append_many = H.knl_append_many,
  events = H.knl_events,
  tail = H.knl_tail,
  has = H.knl_has,
  query = H.knl_query,
  schema = H.knl_schema,
  clock = H.knl_clock,
}
