package yarn

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	return io.Copy(w, resp.Body)
}
