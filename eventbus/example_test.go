package eventbus_test

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/eventbus"
)

// ExampleNewMemory publishes a session's events and subscribes to them
// (SPEC API-2): a subscriber that comes late gets what the window still
// holds after the id it names, then the live events, with neither a gap nor
// a duplicate; one whose events were evicted learns it from Gap and reads
// them from the ledger first.
func ExampleNewMemory() {
	ctx := context.Background()
	bus := eventbus.NewMemory(eventbus.Options{Window: 3})
	defer bus.Close()

	publish := func(id int64, typ string) {
		err := bus.Publish(ctx, eventbus.Event{SessionID: "s1", ID: id, RunID: "r1", Type: typ, Durable: typ != "text_delta",
			Data: []byte(`{"type":"` + typ + `"}`)})
		if err != nil {
			fmt.Println("error:", err)
		}
	}
	publish(1, "run_start")
	publish(2, "message")
	publish(3, "text_delta")
	publish(4, "message")

	// Resume after event 2: 3 and 4 are still in the window of 3 events.
	sub, err := bus.Subscribe(ctx, "s1", 2)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sub.Close()
	fmt.Println("gap:", sub.Gap())
	publish(5, "done") // live
	for range 3 {
		ev := <-sub.Events()
		fmt.Println(ev.ID, ev.Type, string(ev.Data))
	}

	// From the start: event 1 left the window; the subscription says so.
	late, err := bus.Subscribe(ctx, "s1", 0)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer late.Close()
	fmt.Println("gap:", late.Gap(), "first held:", (<-late.Events()).ID)

	// An id that is not above the last one is refused.
	err = bus.Publish(ctx, eventbus.Event{SessionID: "s1", ID: 5, Type: "message"})
	fmt.Println(err)
	// Output:
	// gap: 0
	// 3 text_delta {"type":"text_delta"}
	// 4 message {"type":"message"}
	// 5 done {"type":"done"}
	// gap: 2 first held: 3
	// eventbus: publish s1/5: event id not above the session's last published id: the last published is 5
}
