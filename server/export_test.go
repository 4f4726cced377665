package server

// SetRawWriteHook has f called after every write(2) to a parked stream's
// raw socket, in every server of the process, until the returned function
// is called (BenchmarkFanout notes the end of the server's last write).
func SetRawWriteHook(f func()) (restore func()) {
	rawWriteHook.Store(&f)
	return func() { rawWriteHook.Store(nil) }
}
