package yarn

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxLogErrorBody bounds what of a failed log answer is read for the error.
const maxLogErrorBody = 64 << 10

// ContainerLog copies one log file of a container (stdout, stderr, ...) from the NodeManager
// that runs it to w: GET <nodeHTTPAddress>/ws/v1/node/containers/{container}/logs/{file} with the
// client's authentication. nodeHTTPAddress is "host:port" or a URL, as the RM reports it
// (AppContainer.NodeHTTPAddress, AppAttempt.NodeHTTPAddress). The NodeManager serves the logs of
// the containers it knows: running ones, and finished ones until log aggregation or the log
// retention removes them.
func (c *Client) ContainerLog(ctx context.Context, nodeHTTPAddress, containerID, file string, w io.Writer) (int64, error) {
	if nodeHTTPAddress == "" || containerID == "" || file == "" || strings.ContainsAny(file, "/\x00") {
		return 0, fmt.Errorf("container log: want a NodeManager address, a container id and a file name (got %q, %q, %q)", nodeHTTPAddress, containerID, file)
	}
	base, err := parseBase(nodeHTTPAddress, false)
	if err != nil {
		return 0, fmt.Errorf("container log: NodeManager address %q: %w", nodeHTTPAddress, err)
	}
	p := "/ws/v1/node/containers/" + url.PathEscape(containerID) + "/logs/" + url.PathEscape(file)
	u := c.requestURL(base, p, nil)
	ctx, cancel := context.WithTimeout(ctx, max(c.timeout, 5*time.Minute))
	defer cancel()
	resp, err := c.sender.send(ctx, http.MethodGet, u, http.Header{"Accept": {"text/plain"}}, nil)
	if err != nil {
		return 0, &RequestError{Method: http.MethodGet, URL: redactURL(u), Err: fmt.Errorf("%w: %w", ErrUnreachable, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxLogErrorBody))
		re := DecodeRemoteError(resp.StatusCode, resp.Header.Get("Content-Type"), body)
		re.Method, re.URL = http.MethodGet, redactURL(u)
		return 0, re
	}
	return copyLogContents(w, resp.Body, containerID, file)
}

// maxLogPreamble bounds the NodeManager's preamble before a log's contents.
const maxLogPreamble = 8 << 10

// copyLogContents copies the log file's bytes of a NodeManager answer to w. Hadoop 3's
// NodeManagers wrap the file (NMWebServices, LogToolUtils):
//
//	Container: <id> on <node>
//	LogAggregationType: LOCAL
//	===...
//	LogType:<file>
//	LogLastModifiedTime:<date>
//	LogLength:<n>
//	LogContents:
//	<n bytes>
//	End of LogType:<file>. ...
//
// followed by the aggregated parts of a rolling aggregation, if any. Only the n bytes are copied;
// an answer without that preamble is copied whole.
func copyLogContents(w io.Writer, body io.Reader, containerID, file string) (int64, error) {
	br := bufio.NewReaderSize(body, maxLogPreamble)
	head, _ := br.Peek(maxLogPreamble)
	if !bytes.HasPrefix(head, []byte("Container: "+containerID+" on ")) {
		return io.Copy(w, br)
	}
	const marker = "\nLogContents:\n"
	end := bytes.Index(head, []byte(marker))
	if end < 0 {
		return io.Copy(w, br)
	}
	var length int64 = -1
	typeOK := false
	for _, line := range strings.Split(string(head[:end]), "\n") {
		if v, ok := strings.CutPrefix(line, "LogLength:"); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
				length = n
			}
		}
		if v, ok := strings.CutPrefix(line, "LogType:"); ok && strings.TrimSpace(v) == file {
			typeOK = true
		}
	}
	if length < 0 || !typeOK {
		return io.Copy(w, br)
	}
	if _, err := br.Discard(end + len(marker)); err != nil {
		return 0, err
	}
	n, err := io.CopyN(w, br, length)
	if err == io.EOF {
		err = fmt.Errorf("container log %s of %s: the NodeManager sent %d of the %d bytes it announced: %w", file, containerID, n, length, io.ErrUnexpectedEOF)
	}
	return n, err
}
