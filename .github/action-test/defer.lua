-- action-test.yml: exit 75, which the action turns into a passing step with a notice.
job.defer("retry later")
