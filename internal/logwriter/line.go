package logwriter

import "encoding/json"

// StampLayout is how multi writes a time on a line: RFC 3339 in UTC
// with microseconds, as journald shows it.
const StampLayout = "2006-01-02T15:04:05.000000Z07:00"

// AppendJSONLine appends to b one line of a node's output as a JSON
// object, as multi run and multi logs print it with --log-format=json:
// time (left out when stamp is ""), node, stream and line, then a
// newline.
func AppendJSONLine(b []byte, stamp, node, stream string, text []byte) []byte {
	v, _ := json.Marshal(struct {
		Time   string `json:"time,omitempty"`
		Node   string `json:"node"`
		Stream string `json:"stream"`
		Line   string `json:"line"`
	}{stamp, node, stream, string(text)})
	return append(append(b, v...), '\n')
}
