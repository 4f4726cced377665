package cli

import "encoding/json"

// jsonLine encodes v as one line of JSON Lines.
func jsonLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
