package jobs

const helperEnv = "JOBS_TEST_HELPER"

func helper(mode string) int { return 2 }
