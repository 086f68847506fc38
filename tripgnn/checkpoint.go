package tripgnn

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/stem-kgqa/stem/atomicfile"
)

// Checkpoint layout (little-endian):
//
//	magic    8 bytes  "STEMTGNN"
//	version  uint32   checkpointVersion
//	hdrLen   uint32   length of the JSON header
//	header   hdrLen bytes of JSON (see header)
//	weights  float32 values of every parameter, in header order
//	sum      32 bytes SHA-256 of everything before it
//
// AdamW moments are not saved: training resumed from a checkpoint restarts
// them (as fine-tuning from released weights does).
const (
	checkpointMagic   = "STEMTGNN"
	checkpointVersion = 1
	maxHeader         = 1 << 20
)

type header struct {
	Config Config        `json:"config"`
	Step   int           `json:"step"`
	Params []paramHeader `json:"params"`
}

type paramHeader struct {
	Name string `json:"name"`
	Dims []int  `json:"dims"`
}

// Save writes the model (configuration, encoder identity and weights) to
// path atomically: a failed save leaves any previous file intact.
func (m *Model) Save(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := header{Config: m.cfg, Step: m.step}
	for _, p := range m.params {
		h.Params = append(h.Params, paramHeader{Name: p.name, Dims: p.dims})
	}
	js, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("tripgnn: save %s: %w", path, err)
	}
	err = atomicfile.Write(path, 0o644, func(w io.Writer) error {
		sum := sha256.New()
		mw := io.MultiWriter(w, sum)
		var buf bytes.Buffer
		buf.WriteString(checkpointMagic)
		buf.Write(binary.LittleEndian.AppendUint32(nil, checkpointVersion))
		buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(js))))
		buf.Write(js)
		if _, err := mw.Write(buf.Bytes()); err != nil {
			return err
		}
		var chunk []byte
		for _, p := range m.params {
			chunk = chunk[:0]
			for _, x := range p.data {
				chunk = binary.LittleEndian.AppendUint32(chunk, math.Float32bits(x))
			}
			if _, err := mw.Write(chunk); err != nil {
				return err
			}
		}
		_, err := w.Write(sum.Sum(nil))
		return err
	})
	if err != nil {
		return fmt.Errorf("tripgnn: save %s: %w", path, err)
	}
	return nil
}

// Load reads a checkpoint written by Save and checks that it was trained
// on vectors of the given encoder (name and dimension). A checkpoint of
// another encoder, of a newer format version, or damaged (checksum) is an
// error.
func Load(path, encoderName string, encoderDim int) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tripgnn: load checkpoint: %w", err)
	}
	m, err := decode(data, encoderName, encoderDim)
	if err != nil {
		return nil, fmt.Errorf("tripgnn: load checkpoint %s: %w", path, err)
	}
	return m, nil
}

func decode(data []byte, encoderName string, encoderDim int) (*Model, error) {
	const fixed = len(checkpointMagic) + 8
	if len(data) < fixed+sha256.Size || string(data[:len(checkpointMagic)]) != checkpointMagic {
		return nil, fmt.Errorf("not a Triple-GNN checkpoint (%d bytes, no %q header)", len(data), checkpointMagic)
	}
	// The checksum covers the version field: check it first, so that a
	// damaged version byte reads as damage, not as a newer stem.
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("checksum mismatch: the file is truncated or corrupt")
	}
	version := binary.LittleEndian.Uint32(data[len(checkpointMagic):])
	if version > checkpointVersion {
		return nil, fmt.Errorf("format version %d is newer than this build reads (%d): upgrade stem", version, checkpointVersion)
	}
	if version == 0 {
		return nil, fmt.Errorf("format version 0 is invalid")
	}
	hdrLen := int(binary.LittleEndian.Uint32(data[len(checkpointMagic)+4:]))
	if hdrLen > maxHeader || fixed+hdrLen > len(body) {
		return nil, fmt.Errorf("header length %d does not fit the file", hdrLen)
	}
	var h header
	if err := json.Unmarshal(body[fixed:fixed+hdrLen], &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if h.Config.EncoderName != encoderName || h.Config.EncoderDim != encoderDim {
		return nil, fmt.Errorf("trained on encoder %q (dim %d), but the vectors come from %q (dim %d): retrain or use that encoder",
			h.Config.EncoderName, h.Config.EncoderDim, encoderName, encoderDim)
	}
	cfg, err := h.Config.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, params: layout(cfg), step: h.Step}
	if len(h.Params) != len(m.params) {
		return nil, fmt.Errorf("%d parameters, the configuration needs %d", len(h.Params), len(m.params))
	}
	rest := body[fixed+hdrLen:]
	for i := range m.params {
		p := &m.params[i]
		if h.Params[i].Name != p.name || !slices.Equal(h.Params[i].Dims, p.dims) {
			return nil, fmt.Errorf("parameter %d is %s %v, want %s %v", i, h.Params[i].Name, h.Params[i].Dims, p.name, p.dims)
		}
		if len(rest) < 4*len(p.data) {
			return nil, fmt.Errorf("weights end inside parameter %s", p.name)
		}
		for j := range p.data {
			p.data[j] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*j:]))
		}
		rest = rest[4*len(p.data):]
		if err := finite(p.name, p.data); err != nil {
			return nil, fmt.Errorf("weights: %w", err)
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the weights", len(rest))
	}
	return m, nil
}
