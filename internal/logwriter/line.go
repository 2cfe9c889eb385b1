package logwriter

import "encoding/json"

// StampLayout is how multi writes a time on a line: RFC 3339 in UTC
// with microseconds, as journald shows it.
const StampLayout = "2006-01-02T15:04:05.000000Z07:00"

// AppendLine appends to b one line of a node's output as multi prints
// it (multi run, multi logs), ending in a newline: with asJSON an object
// of time (left out when stamp is ""), node, stream and line; else the
// time stamp (when not "") and prefix ("w1 | ") before the text.
func AppendLine(b []byte, asJSON bool, stamp, node, stream string, prefix, text []byte) []byte {
	if asJSON {
		v, _ := json.Marshal(struct {
			Time   string `json:"time,omitempty"`
			Node   string `json:"node"`
			Stream string `json:"stream"`
			Line   string `json:"line"`
		}{stamp, node, stream, string(text)})
		return append(append(b, v...), '\n')
	}
	if stamp != "" {
		b = append(append(b, stamp...), ' ')
	}
	return append(append(append(b, prefix...), text...), '\n')
}
