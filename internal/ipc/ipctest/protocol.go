package ipctest

import (
	"sync"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
)

// Protocol answers the calls of one Hadoop protocol by method. Its Handle is a Handler: a call
// of another protocol gets RpcNoSuchProtocolException and a method it does not know
// RpcNoSuchMethodException, as a Hadoop server answers them.
type Protocol struct {
	name    string
	lock    sync.Locker
	methods map[string]Handler
}

// Method is one method of a Protocol (see Answer).
type Method struct {
	name string
	h    Handler
}

// Answer is the method name answered by f, which gets the call's request decoded (a request that
// does not decode is answered with the decoding error).
func Answer[Req any, P interface {
	*Req
	proto.Message
}](name string, f func(P) (proto.Message, error)) Method {
	return Method{name: name, h: func(c *Call) (proto.Message, error) {
		req := P(new(Req))
		if err := c.Decode(req); err != nil {
			return nil, err
		}
		return f(req)
	}}
}

// NewProtocol returns the protocol name (e.g. org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB)
// answering methods. lock, when not nil, is held while a method runs.
func NewProtocol(name string, lock sync.Locker, methods ...Method) *Protocol {
	p := &Protocol{name: name, lock: lock, methods: map[string]Handler{}}
	for _, m := range methods {
		p.methods[m.name] = m.h
	}
	return p
}

// Handle answers one call with the method of its name.
func (p *Protocol) Handle(c *Call) (proto.Message, error) {
	if c.Protocol != p.name {
		return nil, &Exception{Class: "org.apache.hadoop.ipc.RpcNoSuchProtocolException", Message: "Unknown protocol: " + c.Protocol}
	}
	h, ok := p.methods[c.Method]
	if !ok {
		return nil, &Exception{Class: "org.apache.hadoop.ipc.RpcNoSuchMethodException", Message: "Unknown method " + c.Method}
	}
	if p.lock != nil {
		p.lock.Lock()
		defer p.lock.Unlock()
	}
	return h(c)
}
