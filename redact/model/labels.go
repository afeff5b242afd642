package model

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// NumLabels is the number of classes the model predicts per token: O plus
// B, I, E and S for each of eight categories.
const NumLabels = 33

// DefaultPadTokenID is the padding id used when config.json names none.
const DefaultPadTokenID = 199999

// Tag is a BIOES tag. The zero value is [TagO], background.
type Tag uint8

// The BIOES tags: outside, begin, inside, end and single.
const (
	TagO Tag = iota
	TagB
	TagI
	TagE
	TagS
)

// String returns "O", "B", "I", "E" or "S".
func (t Tag) String() string {
	if int(t) < len("OBIES") {
		return "OBIES"[t : t+1]
	}
	return "?"
}

// Label is one output class: a tag and, except for O, a category such as
// private_email. The zero value is O.
type Label struct {
	Tag      Tag
	Category string
}

// String returns "O" or "B-private_email".
func (l Label) String() string {
	if l.Tag == TagO {
		return "O"
	}
	return l.Tag.String() + "-" + l.Category
}

// ParseLabel parses "O" or "B-x", "I-x", "E-x", "S-x" with a non-empty x.
func ParseLabel(s string) (Label, error) {
	if s == "O" {
		return Label{}, nil
	}
	prefix, cat, ok := strings.Cut(s, "-")
	if !ok || cat == "" || len(prefix) != 1 || strings.TrimSpace(cat) != cat {
		return Label{}, fmt.Errorf("label %q: want O or B-, I-, E-, S- and a category", s)
	}
	var t Tag
	switch prefix {
	case "B":
		t = TagB
	case "I":
		t = TagI
	case "E":
		t = TagE
	case "S":
		t = TagS
	default:
		return Label{}, fmt.Errorf("label %q: prefix %q is not B, I, E or S", s, prefix)
	}
	return Label{Tag: t, Category: cat}, nil
}

// Config is what the engine reads from config.json. The zero value has no
// labels and is refused by the engine.
type Config struct {
	// Labels holds the [NumLabels] classes in id order; Labels[0] is O.
	Labels []Label
	// PadTokenID pads windows shorter than the batch's longest.
	PadTokenID int64
}

// ParseConfig reads config.json: id2label must have exactly [NumLabels]
// entries with ids 0..32, label 0 must be O and only label 0, the rest BIOES
// labels; pad_token_id defaults to [DefaultPadTokenID].
func ParseConfig(data []byte) (Config, error) {
	var raw struct {
		ID2Label   map[string]string `json:"id2label"`
		PadTokenID *json.Number      `json:"pad_token_id"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Config{}, fmt.Errorf("config.json: %v", err)
	}
	if len(raw.ID2Label) != NumLabels {
		return Config{}, fmt.Errorf("config.json: id2label has %d labels, want %d", len(raw.ID2Label), NumLabels)
	}
	labels := make([]Label, NumLabels)
	seen := make([]bool, NumLabels)
	for k, v := range raw.ID2Label {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 || id >= NumLabels || strconv.Itoa(id) != k {
			return Config{}, fmt.Errorf("config.json: id2label key %q: want 0..%d", k, NumLabels-1)
		}
		if seen[id] {
			return Config{}, fmt.Errorf("config.json: id2label id %d twice", id)
		}
		seen[id] = true
		l, err := ParseLabel(v)
		if err != nil {
			return Config{}, fmt.Errorf("config.json: id2label %d: %v", id, err)
		}
		if (id == 0) != (l.Tag == TagO) {
			return Config{}, fmt.Errorf("config.json: id2label %d is %q: label 0, and only label 0, must be O", id, v)
		}
		labels[id] = l
	}
	pad := int64(DefaultPadTokenID)
	if raw.PadTokenID != nil {
		n, err := raw.PadTokenID.Int64()
		if err != nil || n < 0 {
			return Config{}, fmt.Errorf("config.json: pad_token_id %q: want a non-negative integer", raw.PadTokenID.String())
		}
		pad = n
	}
	return Config{Labels: labels, PadTokenID: pad}, nil
}

// ParseMaxLength reads model_max_length from tokenizer_config.json: the
// usable token limit of one window, a positive integer of at least 3,
// written as a number or a numeric string.
func ParseMaxLength(data []byte) (int, error) {
	var raw struct {
		ModelMaxLength json.RawMessage `json:"model_max_length"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return 0, fmt.Errorf("tokenizer_config.json: %v", err)
	}
	v := strings.TrimSpace(string(raw.ModelMaxLength))
	if v == "" || v == "null" {
		return 0, fmt.Errorf("tokenizer_config.json: no model_max_length")
	}
	if strings.HasPrefix(v, `"`) {
		var s string
		if err := json.Unmarshal(raw.ModelMaxLength, &s); err != nil {
			return 0, fmt.Errorf("tokenizer_config.json: model_max_length %s: %v", v, err)
		}
		v = strings.TrimSpace(s)
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 3 {
		return 0, fmt.Errorf("tokenizer_config.json: model_max_length %s: want an integer of at least 3", string(raw.ModelMaxLength))
	}
	return int(n), nil
}

// Biases are the additive transition biases of the Viterbi decoder, from
// viterbi_calibration.json's operating_points.default.biases. The zero
// value is the unbiased, legality-only decoder.
type Biases struct {
	BackgroundStay    float64 `json:"transition_bias_background_stay"`
	BackgroundToStart float64 `json:"transition_bias_background_to_start"`
	InsideToContinue  float64 `json:"transition_bias_inside_to_continue"`
	InsideToEnd       float64 `json:"transition_bias_inside_to_end"`
	EndToBackground   float64 `json:"transition_bias_end_to_background"`
	EndToStart        float64 `json:"transition_bias_end_to_start"`
}

// ParseCalibration reads viterbi_calibration.json. The default operating
// point must be there; a bias it omits is 0.
func ParseCalibration(data []byte) (Biases, error) {
	var raw struct {
		OperatingPoints map[string]struct {
			Biases *Biases `json:"biases"`
		} `json:"operating_points"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Biases{}, fmt.Errorf("viterbi_calibration.json: %v", err)
	}
	op, ok := raw.OperatingPoints["default"]
	if !ok || op.Biases == nil {
		return Biases{}, fmt.Errorf("viterbi_calibration.json: no operating_points.default.biases")
	}
	return *op.Biases, nil
}
