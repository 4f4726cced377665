package session_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/reinhq/rein/session"
)

func TestFence(t *testing.T) {
	ctx := context.Background()
	if tok, ok := session.FenceOf(ctx, "a"); ok || tok != 0 {
		t.Errorf("FenceOf a bare context: %d, %v; want none", tok, ok)
	}
	a := session.WithFence(ctx, "a", 5)
	if tok, ok := session.FenceOf(a, "a"); !ok || tok != 5 {
		t.Errorf("FenceOf(a): %d, %v; want 5", tok, ok)
	}
	if tok, ok := session.FenceOf(a, "b"); ok {
		t.Errorf("a token of session a fences session b: %d", tok)
	}
	if _, ok := session.FenceOf(a, ""); ok {
		t.Error("a token of session a fences the empty session id")
	}
	ab := session.WithFence(a, "b", 9)
	if tok, ok := session.FenceOf(ab, "a"); !ok || tok != 5 {
		t.Errorf("FenceOf(a) after fencing b too: %d, %v; want 5", tok, ok)
	}
	if tok, ok := session.FenceOf(ab, "b"); !ok || tok != 9 {
		t.Errorf("FenceOf(b): %d, %v; want 9", tok, ok)
	}
	again := session.WithFence(ab, "a", 7)
	if tok, _ := session.FenceOf(again, "a"); tok != 7 {
		t.Errorf("FenceOf(a) after a second WithFence: %d, want 7", tok)
	}
	if tok, _ := session.FenceOf(ab, "a"); tok != 5 {
		t.Errorf("the parent context changed: %d, want 5", tok)
	}
	derived, cancel := context.WithCancel(ab)
	defer cancel()
	if tok, ok := session.FenceOf(derived, "b"); !ok || tok != 9 {
		t.Errorf("FenceOf on a derived context: %d, %v; want 9", tok, ok)
	}
	// A value a caller stored under some other key is no token.
	type other struct{ sessionID string }
	foreign := context.WithValue(ctx, other{"a"}, int64(3))
	if _, ok := session.FenceOf(foreign, "a"); ok {
		t.Error("FenceOf read a value stored under another key")
	}
	if err := fmt.Errorf("session a: append: %w", session.ErrFenced); !errors.Is(err, session.ErrFenced) {
		t.Error("a wrapped ErrFenced does not match")
	}
}
