return "hello, " .. _PROMPT .. ", from " .. std.env.project_root()
