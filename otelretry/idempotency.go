// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"hash/maphash"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// What makes a write repeatable on the wire: an idempotency key per
// operation (draft-ietf-httpapi-idempotency-key-header), generated when
// the caller sent none, and kept for a layer above that sends the
// operation again under the same WithOperationID.

// IdempotencyKey is how WithIdempotencyKeys sends the key it generates: in
// the header Name, as Value formats it. The key is 32 lowercase hex digits
// (128 bits from crypto/rand). A Value must write the key it is given, as
// it is given (in quotes, after a prefix): a nil Value, or one that returns
// "" or a value no header may carry or that does not hold the key (a
// constant, a part of the key), sends it bare; WithIdempotencyKeys calls
// it on two keys of its own to tell, and reports one that fails them (one
// that panics there panics NewTransport), and a Transport reports, once,
// a write whose key it did not write. It must be safe for concurrent use.
// A Name that is no header name
// (the zero IdempotencyKey's "") leaves WithIdempotencyKeys ignored, as
// otel.Handle reports: no key is sent.
type IdempotencyKey struct {
	Name  string
	Value func(key string) string
}

// DraftIdempotencyKey is the IETF draft's header: Idempotency-Key, whose
// value is a Structured Field String, the key in double quotes
// (Idempotency-Key: "8e0f…").
func DraftIdempotencyKey() IdempotencyKey {
	return IdempotencyKey{Name: "Idempotency-Key", Value: structuredString}
}

// structuredString is s as an RFC 8941 sf-string: in double quotes, with
// backslash and double quote escaped.
func structuredString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// newIdempotencyKey returns a new key: 128 bits from crypto/rand, in hex,
// so that no one can guess another operation's key.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails: since Go 1.24 it crashes the program instead
	return hex.EncodeToString(b[:])
}

// wireValue is key as k sends it: Value's, unless it is no value for key
// (see writesKey), then the bare key, and written false.
func (k *IdempotencyKey) wireValue(key string) (v string, written bool) {
	if k.Value == nil {
		return key, true
	}
	if v := k.Value(key); writesKey(v, key) {
		return v, true
	}
	return key, false
}

// writesKey reports whether v, a Value's for key, may be sent as key's: a
// header value that holds key whole, so that two keys never share one
// (a Value that drops part of the key would give writes one value).
func writesKey(v, key string) bool {
	return validHeaderValue(v) && strings.Contains(v, key)
}

// validHeaderName reports whether name is an HTTP field name: a token
// (RFC 9110 §5.1, §5.6.2).
func validHeaderName(name string) bool { return validToken(name) }

// validToken reports whether s is an HTTP token (RFC 9110 §5.6.2), as a
// method's or a field's name is.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v may be a field value: no control
// character but the tab (net/http refuses them), and no space or tab at
// either end (RFC 9110 §5.5: a reader drops them). Other bytes, UTF-8's
// spaces among them, are sent as written.
func validHeaderValue(v string) bool {
	return sendableValue(v) && strings.Trim(v, " \t") == v
}

// sendableValue reports whether net/http sends v as a field value: no
// control character but the tab.
func sendableValue(v string) bool {
	for i := range len(v) {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// requestOf names a request for the keys an operation context remembers:
// its method and URL, without userinfo and fragment (retryinspect's
// repeat: the same method and URL under the same operation context).
func requestOf(method string, u *url.URL) string {
	c := *u
	c.User, c.Fragment, c.RawFragment = nil, "", ""
	return method + " " + c.String()
}

// repeatOf names a write a layer above may send again (see keyMemory):
// its method, URL (with its userinfo, and the Host it is sent to when
// host overrides the URL's) and body, which two different writes to one
// URL (a job's two orders, or one order for two users) do not share. The
// userinfo is told by a hash, so that the name keeps no credential. The
// body is told by its bytes, which the operation buffered before its
// first attempt (planBuffer), as that attempt would have read them: the
// caller's Body, never a GetBody copy (which may rewind the very reader
// the attempt sends). A body that was not buffered (of unknown length,
// larger than the buffer's limit, or the buffers' memory taken) cannot be
// told: ok is false, and the write gets a key of its own (told is false).
func repeatOf(method string, u *url.URL, host string, body []byte, told bool) (name string, ok bool) {
	if !told {
		return "", false
	}
	name = requestOf(method, u)
	if u.User != nil {
		name += " user:" + strconv.FormatUint(maphash.String(nameSeed, u.User.String()), 16)
	}
	if host != "" && host != u.Host {
		name += " host:" + host
	}
	return name + " body:" + strconv.Itoa(len(body)) + ":" +
		strconv.FormatUint(maphash.Bytes(nameSeed, body), 16), true
}

// nameSeed is the process's seed for repeatOf's hashes: names are
// compared within the process alone.
var nameSeed = maphash.MakeSeed()

// keyMemory is the idempotency keys an operation context (WithOperationID)
// keeps for the writes made under it that did not succeed, by request
// (repeatOf: method, URL and body), so that a layer above that sends one
// again reuses its key: its earlier try may have been applied (a 504 from a
// gateway says nothing of the app behind it). A key is taken by every
// operation that repeats its request while it is kept, those in flight
// together too (the server's store of answers by key then applies the
// write once). An operation that succeeds lets its key go, so that a later
// write of the same request is a new one; a repeat that does not succeed
// keeps it as the newest, unless a repeat beside it succeeded (the memory
// knows while any repeat holds the key) or a later write's key is kept.
// At most maxRememberedKeys are kept, the oldest forgotten first (its
// repeat then gets a key of its own): a bound on what a context kept for
// days holds, documented with WithIdempotencyKeys.
type keyMemory struct {
	mu      sync.Mutex
	byName  map[string]*list.Element // of rememberedKey
	byOrder list.List                // the oldest kept first
	// held are the keys repeats in flight took, by key: as many entries as
	// keys held, each gone once its last holder settled.
	held map[string]*heldKey
}

type rememberedKey struct{ request, key string }

// heldKey is a key repeats in flight hold: how many, and whether one of
// them, or another operation of the key, succeeded meanwhile.
type heldKey struct {
	holders int
	letGo   bool
}

const maxRememberedKeys = 1024

// take returns the key kept for request, which the caller then holds
// until it settles it (keepTaken, or letGo with taken); the key stays
// kept for the other repeats until one succeeds.
func (m *keyMemory) take(request string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byName[request]
	if !ok {
		return "", false
	}
	key := e.Value.(rememberedKey).key
	if m.held == nil {
		m.held = map[string]*heldKey{}
	}
	h := m.held[key]
	if h == nil {
		h = &heldKey{}
		m.held[key] = h
	}
	h.holders++
	return key, true
}

// keep keeps key, a write's that did not succeed, as the newest for
// request, in place of any key kept for it: a later write's key replaces
// an earlier one's.
func (m *keyMemory) keep(request, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keepLocked(request, key)
}

// keepTaken settles key, which a repeat took and sent without success: it
// is kept as the newest (again, when it was forgotten as the oldest
// meanwhile), unless a repeat beside it succeeded (the write is done) or a
// later write's key is kept for request now.
func (m *keyMemory) keepTaken(request, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unhold(key) {
		return
	}
	if e, ok := m.byName[request]; ok && e.Value.(rememberedKey).key != key {
		return
	}
	m.keepLocked(request, key)
}

// letGo lets key go after a success: no longer kept for request, and the
// repeats that hold it keep it no more. taken: the success's own operation
// holds it (it took it), and settles it so.
func (m *keyMemory) letGo(request, key string, taken bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byName[request]; ok && e.Value.(rememberedKey).key == key {
		delete(m.byName, request)
		m.byOrder.Remove(e)
	}
	if h := m.held[key]; h != nil {
		h.letGo = true
	}
	if taken {
		m.unhold(key)
	}
}

// forget lets key go after a success an earlier hop of a redirect chain
// kept it for (see identity.chainKeys).
func (m *keyMemory) forget(request, key string) { m.letGo(request, key, false) }

// restore keeps key again after its success turned out not to reach the
// caller (answerBroke), unless a later write's key is kept for request:
// the repeats that hold it keep it again too.
func (m *keyMemory) restore(request, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.held[key]; h != nil {
		h.letGo = false
	}
	if _, ok := m.byName[request]; !ok {
		m.keepLocked(request, key)
	}
}

// unhold settles one holder of key and reports whether the key was let go
// while it was held.
func (m *keyMemory) unhold(key string) (letGo bool) {
	h := m.held[key]
	if h == nil {
		return false
	}
	h.holders--
	if h.holders <= 0 {
		delete(m.held, key)
	}
	return h.letGo
}

// keepLocked is keep, with m.mu held.
func (m *keyMemory) keepLocked(request, key string) {
	if m.byName == nil {
		m.byName = map[string]*list.Element{}
	}
	if e, ok := m.byName[request]; ok {
		m.byOrder.Remove(e)
	} else if m.byOrder.Len() >= maxRememberedKeys {
		oldest := m.byOrder.Front()
		delete(m.byName, oldest.Value.(rememberedKey).request)
		m.byOrder.Remove(oldest)
	}
	m.byName[request] = m.byOrder.PushBack(rememberedKey{request, key})
}

// replayed reports whether an answer says it was replayed from the
// server's store of answers by key (Stripe's Idempotent-Replayed: true;
// the draft defines no such header).
func replayed(h http.Header) bool {
	v := h["Idempotent-Replayed"]
	return len(v) > 0 && strings.EqualFold(strings.TrimSpace(v[0]), "true")
}
