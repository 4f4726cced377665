package action

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
)

// decodeInput returns the input as compact JSON and its top-level
// properties (numbers kept as written). Empty input is {}.
func decodeInput(raw json.RawMessage) ([]byte, map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b.Bytes()))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, nil, err
	}
	props, ok := v.(map[string]any)
	if !ok {
		return nil, nil, errors.New("the input must be a JSON object")
	}
	return b.Bytes(), props, nil
}

// propertyEnv returns REIN_INPUT_<NAME>=value for each top-level string,
// number or boolean property, in the sorted order of the property names;
// the first property to take a variable name keeps it, and none takes
// REIN_INPUT_FILE. Values holding a NUL byte or longer than MaxEnvValue are
// left out: the command finds them in the input file.
func propertyEnv(props map[string]any) []string {
	taken := map[string]bool{EnvInputFile: true}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		var val string
		switch v := props[k].(type) {
		case string:
			val = v
		case json.Number:
			val = v.String()
		case bool:
			val = "false"
			if v {
				val = "true"
			}
		default:
			continue // null, arrays and objects: in REIN_INPUT only
		}
		suffix := upperSnake(k)
		if suffix == "" || len(val) > MaxEnvValue || strings.IndexByte(val, 0) >= 0 {
			continue
		}
		name := EnvPrefix + suffix
		if taken[name] {
			continue
		}
		taken[name] = true
		env = append(env, name+"="+val)
	}
	return env
}

// upperSnake turns a property name into the tail of a variable name:
// dryRun, dry-run and dry_run give DRY_RUN, URLPath gives URL_PATH. Other
// characters than ASCII letters and digits separate words; "" when nothing
// is left.
func upperSnake(name string) string {
	var b strings.Builder
	sep := false // a separator is due before the next letter or digit
	for i := 0; i < len(name); i++ {
		c := name[i]
		lower, upper, digit := c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		if !lower && !upper && !digit {
			sep = b.Len() > 0
			continue
		}
		if upper && b.Len() > 0 && i > 0 {
			prev := name[i-1]
			prevLowerOrDigit := prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
			nextLower := i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'
			prevUpper := prev >= 'A' && prev <= 'Z'
			if prevLowerOrDigit || prevUpper && nextLower {
				sep = true
			}
		}
		if sep {
			b.WriteByte('_')
			sep = false
		}
		if lower {
			c -= 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
