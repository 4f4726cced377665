package runner

import "github.com/reinhq/rein/tool/builtin"

// JobInfo is a snapshot of a background job (SPEC TOOL-8), as the API
// lists it.
type JobInfo = builtin.JobInfo

// showJobs makes the jobs of c, a run's Conversation, visible to
// [Service.SessionJobs] while the run executes; the returned func hides
// them again. The Conversation's Close stops them when the run ends: on
// the server a job lives as long as the run that started it.
func (s *Service) showJobs(sessionID string, c *Conversation) func() {
	jobs := c.Jobs()
	if jobs == nil {
		return func() {}
	}
	s.mu.Lock()
	if s.jobs == nil {
		s.jobs = map[string]*builtin.Jobs{}
	}
	s.jobs[sessionID] = jobs
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.jobs[sessionID] == jobs {
			delete(s.jobs, sessionID)
		}
		s.mu.Unlock()
	}
}

// SessionJobs returns the background jobs of a session whose run this
// process executes now, oldest first; none otherwise (in split mode the
// worker running it holds them). It backs GET /sessions/{id}/jobs.
func (s *Service) SessionJobs(sessionID string) []JobInfo {
	s.mu.Lock()
	jobs := s.jobs[sessionID]
	s.mu.Unlock()
	if jobs == nil {
		return nil
	}
	return jobs.List()
}
