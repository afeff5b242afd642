package model

import (
	"strings"
	"testing"
)

func TestParseLabel(t *testing.T) {
	tests := []struct {
		in   string
		want Label
		ok   bool
	}{
		{"O", Label{}, true},
		{"B-private_email", Label{TagB, "private_email"}, true},
		{"I-secret", Label{TagI, "secret"}, true},
		{"E-x", Label{TagE, "x"}, true},
		{"S-account_number", Label{TagS, "account_number"}, true},
		{"X-secret", Label{}, false},
		{"B-", Label{}, false},
		{"B", Label{}, false},
		{"o", Label{}, false},
		{"BB-x", Label{}, false},
		{"B- x", Label{}, false},
		{"", Label{}, false},
	}
	for _, tc := range tests {
		got, err := ParseLabel(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseLabel(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("Label(%q).String() = %q", tc.in, got.String())
		}
	}
}

func TestParseConfig(t *testing.T) {
	good := string(fixtureConfig(200018))
	tests := []struct {
		name    string
		json    string
		wantErr string
		wantPad int64
	}{
		{"published labels", good, "", 200018},
		{"pad defaults", strings.Replace(good, `"pad_token_id":200018`, `"pad_token_id":null`, 1), "", DefaultPadTokenID},
		{"pad absent", strings.Replace(good, `,"pad_token_id":200018`, ``, 1), "", DefaultPadTokenID},
		{"negative pad", strings.Replace(good, `"pad_token_id":200018`, `"pad_token_id":-1`, 1), "pad_token_id", 0},
		{"label 0 not O", strings.Replace(good, `"0":"O"`, `"0":"B-secret"`, 1), "label 0", 0},
		{"O elsewhere", strings.Replace(good, `"1":"B-account_number"`, `"1":"O"`, 1), "only label 0", 0},
		{"bad prefix", strings.Replace(good, `"1":"B-account_number"`, `"1":"Q-account_number"`, 1), "prefix", 0},
		{"32 labels", strings.Replace(good, `"32":"S-secret",`, ``, 1), "32 labels", 0},
		{"key out of range", strings.Replace(good, `"32":`, `"33":`, 1), "want 0..32", 0},
		{"key not canonical", strings.Replace(good, `"32":`, `"032":`, 1), "want 0..32", 0},
		{"not json", `{`, "config.json", 0},
	}
	if !strings.Contains(good, `"32":"S-secret",`) {
		t.Fatalf("fixture layout changed: %s", good)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Labels) != NumLabels || cfg.Labels[0] != (Label{}) || cfg.PadTokenID != tc.wantPad {
				t.Fatalf("config %+v", cfg)
			}
			for i, l := range cfg.Labels {
				if l.String() != published[i] {
					t.Errorf("label %d = %s, want %s", i, l, published[i])
				}
			}
		})
	}
}

func TestParseMaxLength(t *testing.T) {
	tests := []struct {
		json string
		want int
	}{
		{`{"model_max_length": 128000}`, 128000},
		{`{"model_max_length": "32"}`, 32},
		{`{"model_max_length": " 64 "}`, 64},
		{`{"model_max_length": 3}`, 3},
		{`{"model_max_length": 2}`, 0},
		{`{"model_max_length": 0}`, 0},
		{`{"model_max_length": -5}`, 0},
		{`{"model_max_length": 3.5}`, 0},
		{`{"model_max_length": 1e30}`, 0},
		{`{"model_max_length": "abc"}`, 0},
		{`{"model_max_length": true}`, 0},
		{`{"model_max_length": null}`, 0},
		{`{}`, 0},
		{`[`, 0},
	}
	for _, tc := range tests {
		got, err := ParseMaxLength([]byte(tc.json))
		if tc.want == 0 {
			if err == nil {
				t.Errorf("%s: got %d, want an error", tc.json, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %d %v, want %d", tc.json, got, err, tc.want)
		}
	}
}

func TestParseCalibration(t *testing.T) {
	tests := []struct {
		name, json string
		want       Biases
		ok         bool
	}{
		{"zeros", zeroCalibration, Biases{}, true},
		{"values", `{"operating_points":{"default":{"biases":{"transition_bias_background_stay":0.5,"transition_bias_background_to_start":-1,"transition_bias_inside_to_continue":2,"transition_bias_inside_to_end":3,"transition_bias_end_to_background":4,"transition_bias_end_to_start":5}},"high_recall":{"biases":{}}}}`,
			Biases{0.5, -1, 2, 3, 4, 5}, true},
		{"omitted bias is zero", `{"operating_points":{"default":{"biases":{"transition_bias_end_to_start":1.5}}}}`, Biases{EndToStart: 1.5}, true},
		{"no default", `{"operating_points":{"strict":{"biases":{}}}}`, Biases{}, false},
		{"no biases", `{"operating_points":{"default":{}}}`, Biases{}, false},
		{"bias not a number", `{"operating_points":{"default":{"biases":{"transition_bias_end_to_start":"x"}}}}`, Biases{}, false},
		{"not json", `{`, Biases{}, false},
	}
	for _, tc := range tests {
		got, err := ParseCalibration([]byte(tc.json))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%s: got %+v %v, want %+v ok=%v", tc.name, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzParseAssets(f *testing.F) {
	f.Add(string(fixtureConfig(1)))
	f.Add(zeroCalibration)
	f.Add(`{"model_max_length":"12"}`)
	f.Fuzz(func(t *testing.T, s string) {
		if cfg, err := ParseConfig([]byte(s)); err == nil {
			if len(cfg.Labels) != NumLabels || cfg.Labels[0].Tag != TagO {
				t.Fatalf("accepted config with labels %v", cfg.Labels)
			}
			for _, l := range cfg.Labels[1:] {
				if l.Tag == TagO || l.Category == "" {
					t.Fatalf("accepted label %v", l)
				}
			}
		}
		if n, err := ParseMaxLength([]byte(s)); err == nil && n < 3 {
			t.Fatalf("accepted model_max_length %d", n)
		}
		ParseCalibration([]byte(s))
	})
}
