package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/runner"
)

// The session config options rein offers: the model of the session's
// next runs, and, while that model takes one, the reasoning effort.
const (
	configModel  sdk.SessionConfigId = "model"
	configEffort sdk.SessionConfigId = "effort"
)

// effortDefault is the effort option's value for the configuration's
// thinking (off, or thinking_budget's tokens).
const effortDefault = "default"

// maxModelChoices bounds the models offered in the picker.
const maxModelChoices = 24

// configOptions are the session's config options: the model, then the
// reasoning effort when the model takes one ([runner.Model.TakesEffort]),
// so a client is offered the effort only where it does something.
func configOptions(conv *runner.Conversation) []sdk.SessionConfigOption {
	s := conv.Setup()
	opts := []sdk.SessionConfigOption{modelOption(s)}
	if s.Model().TakesEffort() {
		opts = append(opts, effortOption(conv.Effort()))
	}
	return opts
}

// modelOption is the model picker: the current model first among the
// choices, then the model aliases rein knows (sonnet, opus, haiku, the
// user's), each resolved when chosen.
func modelOption(s *runner.Setup) sdk.SessionConfigOption {
	current := ""
	if m := s.Model(); m != nil {
		current = m.Label
	}
	choices := []sdk.SessionConfigSelectOption{{Name: current, Value: sdk.SessionConfigValueId(current),
		Description: sdk.Ptr("the session's model now")}}
	aliases := s.Registry().Aliases()
	names := make([]string, 0, len(aliases))
	for a := range aliases {
		names = append(names, a)
	}
	slices.Sort(names)
	for _, a := range names {
		if a == current || len(choices) >= maxModelChoices {
			continue
		}
		choices = append(choices, sdk.SessionConfigSelectOption{Name: a, Value: sdk.SessionConfigValueId(a),
			Description: sdk.Ptr(aliases[a])})
	}
	return selectOption(configModel, "Model", sdk.SessionConfigOptionCategoryModel, current,
		"The model of the next prompts (rein's --model)", choices)
}

// effortOption is the reasoning effort picker: the configuration's
// thinking, or one of [runner.Efforts].
func effortOption(current string) sdk.SessionConfigOption {
	if current == "" {
		current = effortDefault
	}
	choices := []sdk.SessionConfigSelectOption{{Name: "Default", Value: effortDefault,
		Description: sdk.Ptr("the configuration's thinking: off, or thinking_budget's tokens")}}
	for _, e := range runner.Efforts {
		choices = append(choices, sdk.SessionConfigSelectOption{Name: e, Value: sdk.SessionConfigValueId(e)})
	}
	return selectOption(configEffort, "Reasoning effort", sdk.SessionConfigOptionCategoryThoughtLevel, current,
		"How much the model reasons before it answers, in the next prompts", choices)
}

// selectOption is a select config option.
func selectOption(id sdk.SessionConfigId, name string, cat sdk.SessionConfigOptionCategory, current, desc string, choices []sdk.SessionConfigSelectOption) sdk.SessionConfigOption {
	opts := sdk.SessionConfigSelectOptionsUngrouped(choices)
	return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{Id: id, Name: name, Type: "select",
		Category: sdk.Ptr(cat), CurrentValue: sdk.SessionConfigValueId(current), Description: sdk.Ptr(desc),
		Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts}}}
}

// SetSessionConfigOption switches the session's model or reasoning effort
// to one of the choices offered, between prompts; it answers the options
// as they are now (a model that takes no effort drops the effort option).
func (a *acpAgent) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams("rein's config options (model, effort) are selects: send a value")
	}
	l := a.get(string(v.SessionId))
	if l == nil {
		return sdk.SetSessionConfigOptionResponse{}, unknownSession(string(v.SessionId))
	}
	if !l.run.TryLock() {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidRequest(fmt.Sprintf("the session is running a prompt; change the %s once it answers", v.ConfigId))
	}
	defer l.run.Unlock()
	var offered *sdk.SessionConfigOptionSelect
	for _, o := range configOptions(l.conv) {
		if o.Select.Id == v.ConfigId {
			offered = o.Select
		}
	}
	if offered == nil {
		if v.ConfigId == configEffort {
			return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("the session's model (%s) takes no reasoning effort: rein offers one for Anthropic and OpenAI models that reason", l.conv.Setup().Model().Label))
		}
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("unknown config option %q; rein offers %q, and %q for a model that takes one", v.ConfigId, configModel, configEffort))
	}
	if !slices.ContainsFunc(*offered.Options.Ungrouped, func(o sdk.SessionConfigSelectOption) bool { return o.Value == v.Value }) {
		var vals []string
		for _, o := range *offered.Options.Ungrouped {
			vals = append(vals, string(o.Value))
		}
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("%s %q is not one of the choices: %s", v.ConfigId, v.Value, strings.Join(vals, ", ")))
	}
	var err error
	switch v.ConfigId {
	case configModel:
		err = l.conv.UseModel(string(v.Value))
	case configEffort:
		effort := string(v.Value)
		if effort == effortDefault {
			effort = ""
		}
		err = l.conv.UseEffort(effort)
	}
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("%s %s: %v", v.ConfigId, v.Value, err))
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: configOptions(l.conv)}, nil
}
