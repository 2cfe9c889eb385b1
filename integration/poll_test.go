package integration

import "github.com/multi-launcher/multi/internal/testutil"

// pollUntil polls with a deadline: see [testutil.PollUntil].
var pollUntil = testutil.PollUntil
