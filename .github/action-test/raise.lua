-- action-test.yml: a raise, which the action turns into a failed step with an error annotation.
error("action-test: expected failure", 0)
