-- Release smoke test (tools/smoke_test.sh): the smallest run, also the one run under --sandbox.
print("hello from " .. _SCRIPT_NAME)
return "ok"
