package kit

import (
	"encoding/binary"

	"github.com/streamsql/streamsql/types"
)

// EmptyCodec serializes struct{}, the value of a set kept as a MapState.
type EmptyCodec struct{}

// Encode implements state.Codec.
func (EmptyCodec) Encode(dst []byte, _ struct{}) []byte { return dst }

// Decode implements state.Codec.
func (EmptyCodec) Decode(b []byte) (struct{}, error) {
	if len(b) != 0 {
		return struct{}{}, types.ErrCorrupt
	}
	return struct{}{}, nil
}

// Int64Codec serializes an int64 as a varint.
type Int64Codec struct{}

// Encode implements state.Codec.
func (Int64Codec) Encode(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

// Decode implements state.Codec.
func (Int64Codec) Decode(b []byte) (int64, error) {
	v, n := binary.Varint(b)
	if n <= 0 || n != len(b) {
		return 0, types.ErrCorrupt
	}
	return v, nil
}
