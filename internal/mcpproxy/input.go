package mcpproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sniffLen is how much of an oversized line is kept to look for its id.
const sniffLen = 4096

// filterInput copies newline-delimited messages from in to out, the pipe the
// SDK's IOTransport reads, and keeps back what would end that transport's
// read loop for good (its decoder stops at the first line that is not JSON,
// and at the first frame over its limit): lines that are not JSON, JSON that
// is not a JSON-RPC message, and lines longer than max. Each one is reported
// through bad, with the id when one could be found. Framing and decoding stay
// the SDK's: a valid line is passed on unchanged. On EOF (or a read error)
// out is closed, which the transport reads as the end of the session.
func filterInput(in io.Reader, out *io.PipeWriter, max int, bad func(id jsonrpc.ID, reason string)) {
	br := bufio.NewReaderSize(in, 64*1024)
	var err error
	for err == nil {
		var line []byte
		var size int
		line, size, err = readLine(br, max)
		if size > max {
			bad(sniffID(line), fmt.Sprintf("a message of more than %d bytes (--max-message-size) was dropped", max))
			continue
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '[' { // a batch is the SDK's to check, element by element
			if _, derr := jsonrpc.DecodeMessage(line); derr != nil {
				if !json.Valid(line) {
					bad(jsonrpc.ID{}, fmt.Sprintf("a line that is not JSON was dropped (%d bytes: %q)", len(line), snippet(line)))
				} else {
					bad(sniffID(line), fmt.Sprintf("a line that is not a JSON-RPC 2.0 message was dropped (%v)", derr))
				}
				continue
			}
		} else if !json.Valid(line) {
			bad(jsonrpc.ID{}, fmt.Sprintf("a line that is not JSON was dropped (%d bytes: %q)", len(line), snippet(line)))
			continue
		}
		if _, werr := out.Write(append(line, '\n')); werr != nil {
			return
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	out.CloseWithError(err)
}

// readLine reads up to and without the next newline. Past max bytes it
// keeps only the first sniffLen and discards the rest of the line; size is
// the line's full length.
func readLine(br *bufio.Reader, max int) (line []byte, size int, err error) {
	for {
		chunk, rerr := br.ReadSlice('\n')
		size += len(chunk)
		switch {
		case size <= max:
			line = append(line, chunk...)
		case len(line) < sniffLen:
			line = append(line, chunk[:min(len(chunk), sniffLen-len(line))]...)
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		if rerr == nil {
			size-- // the newline
		}
		return bytes.TrimSuffix(line, []byte("\n")), size, rerr
	}
}

// sniffID finds a top-level "id" in what may be the truncated start of a
// JSON object, or returns the invalid (null) ID.
func sniffID(data []byte) jsonrpc.ID {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc.ID{}
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}
		}
		if k == "id" {
			var v any
			if dec.Decode(&v) != nil {
				return jsonrpc.ID{}
			}
			id, _ := jsonrpc.MakeID(v)
			return id
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return jsonrpc.ID{}
		}
	}
	return jsonrpc.ID{}
}

func snippet(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}
