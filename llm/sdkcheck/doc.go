// Package sdkcheck holds no code: its tests check rein's hand-written vendor
// adapters against the vendors' official Go SDKs (SPEC PROV-2). See
// sdkcheck_test.go for what they prove and how to update the SDKs.
package sdkcheck
