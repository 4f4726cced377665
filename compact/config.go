package compact

import (
	"log/slog"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
)

// The defaults of [Config].
const (
	DefaultContextWindow    = 128_000
	DefaultSnip             = 0.5
	DefaultSnipTarget       = 0.12
	DefaultSummarise        = 0.6
	DefaultCollapse         = 0.9
	DefaultKeepRecent       = 6
	DefaultCollapseKeep     = 2
	DefaultSnipHeadLines    = 20
	DefaultSnipTailLines    = 20
	DefaultSnipMinChars     = 2_000
	DefaultSummaryMaxTokens = 4_096
	DefaultImageTokens      = 1_600
	// reserveFraction is the share of the window reserved for the reply when
	// Config.ReserveOutput is not set.
	reserveFraction = 0.2
)

// The layer names reported in agent.CompactionEvent.Layers.
const (
	LayerSnip       = "snip"
	LayerSnipInputs = "snip_inputs" // oversized tool inputs of calls that already ran were shrunk
	LayerSummarize  = "summarize"
	LayerExtractive = "extractive" // summarize fell back to a summary built without a model
	LayerCollapse   = "collapse"
)

// Config configures a [Compactor]. The zero value of every field means its
// default.
type Config struct {
	// ContextWindow is the model's context window in tokens (default 128,000;
	// take it from the registry's capabilities).
	ContextWindow int
	// MaxOutput is the model's output limit; when 0, the request's MaxTokens
	// stands in for it.
	MaxOutput int
	// ReserveOutput is kept free for the reply: default min(MaxOutput, 20% of
	// the window), or 20% of the window when no output limit is known.
	ReserveOutput int

	// Snip, Summarise and Collapse are the thresholds of the three layers, as
	// fractions of the budget (defaults 0.5, 0.6 and 0.9). A layer runs when
	// the estimate is above its threshold once the layers before it ran.
	Snip, Summarise, Collapse float64
	// SnipTarget is the low watermark snip trims down to once it runs
	// (default 0.12, at most Snip): trimming well below the threshold means
	// the turns after it only append, so the prompt cache keeps serving
	// the prefix (SPEC CTX-5). When snipping cannot get that low and a
	// summary would leave less, a summary runs instead.
	SnipTarget float64

	// KeepRecent is how many of the newest messages summarize keeps verbatim
	// (default 6); the cut moves back to a clean boundary, so a few more may
	// be kept. CollapseKeep is the same for collapse (default 2).
	KeepRecent, CollapseKeep int
	// SnipHeadLines and SnipTailLines are the lines a snipped tool output
	// keeps at each end (defaults 20 and 20). Outputs of at most SnipMinChars
	// characters are never snipped (default 2,000).
	SnipHeadLines, SnipTailLines, SnipMinChars int
	// SummaryMaxTokens caps the summary's length (default 4,096, or a tenth
	// of a smaller window's size); it is also what the budget sets aside for
	// the summary when planning a cut.
	SummaryMaxTokens int
	// ImageTokens is the estimate of one image (default 1,600).
	ImageTokens int

	// Provider writes the summaries; nil always uses the extractive summary.
	// Model names the model for it; empty means the conversation's model.
	Provider llm.Provider
	Model    string
	// Focus returns the current task state (SPEC LOOP-11), given to the
	// summary and the extractive fallback; nil means none.
	Focus func() agent.Focus
	// Logger receives warnings (a failed summary call); nil discards them.
	Logger *slog.Logger
}

// withDefaults returns cfg with every zero field set to its default.
func (cfg Config) withDefaults() Config {
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setFrac := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	setInt(&cfg.ContextWindow, DefaultContextWindow)
	setFrac(&cfg.Snip, DefaultSnip)
	setFrac(&cfg.Summarise, DefaultSummarise)
	setFrac(&cfg.SnipTarget, min(DefaultSnipTarget, cfg.Snip))
	cfg.SnipTarget = min(cfg.SnipTarget, cfg.Snip)
	setFrac(&cfg.Collapse, DefaultCollapse)
	setInt(&cfg.KeepRecent, DefaultKeepRecent)
	setInt(&cfg.CollapseKeep, DefaultCollapseKeep)
	setInt(&cfg.SnipHeadLines, DefaultSnipHeadLines)
	setInt(&cfg.SnipTailLines, DefaultSnipTailLines)
	setInt(&cfg.SnipMinChars, DefaultSnipMinChars)
	setInt(&cfg.SummaryMaxTokens, min(DefaultSummaryMaxTokens, cfg.ContextWindow/10))
	setInt(&cfg.ImageTokens, DefaultImageTokens)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// reserve returns the tokens kept free for the reply to req.
func (cfg *Config) reserve(req *llm.Request) int {
	if cfg.ReserveOutput > 0 {
		return cfg.ReserveOutput
	}
	share := int(float64(cfg.ContextWindow) * reserveFraction)
	out := cfg.MaxOutput
	if out <= 0 {
		out = req.MaxTokens
	}
	if out > 0 {
		return min(out, share)
	}
	return share
}

// firstThreshold is the lowest threshold: below it, nothing runs.
func (cfg *Config) firstThreshold() float64 {
	return min(cfg.Snip, cfg.Summarise, cfg.Collapse)
}
