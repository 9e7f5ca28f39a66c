package secrets

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler wraps a log handler so that no record it writes holds a
// secret: the message and every attribute's text are masked, and an
// attribute whose key names a secret is replaced whole.
func Handler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ h slog.Handler }

func (m handler) Enabled(ctx context.Context, l slog.Level) bool { return m.h.Enabled(ctx, l) }

func (m handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Mask(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(maskAttr(a))
		return true
	})
	return m.h.Handle(ctx, out)
}

func (m handler) WithAttrs(as []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = maskAttr(a)
	}
	return handler{m.h.WithAttrs(masked)}
}

func (m handler) WithGroup(name string) slog.Handler { return handler{m.h.WithGroup(name)} }

func maskAttr(a slog.Attr) slog.Attr {
	if IsSecretKey(a.Key) {
		return slog.String(a.Key, Redacted)
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Mask(v.String()))
	case slog.KindGroup:
		g := v.Group()
		masked := make([]any, len(g))
		for i, x := range g {
			masked[i] = maskAttr(x)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		// Errors and values that print themselves: as their masked text.
		return slog.String(a.Key, Mask(fmt.Sprint(v.Any())))
	}
	return a
}
