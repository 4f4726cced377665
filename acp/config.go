package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/runner"
)

// configModel is the id of the one session config option rein offers:
// the model of the session's next runs.
const configModel sdk.SessionConfigId = "model"

// maxModelChoices bounds the models offered in the picker.
const maxModelChoices = 24

// configOptions are the session's config options: the model, its current
// one first among the choices, then the model aliases rein knows (sonnet,
// opus, haiku, the user's), each resolved when chosen.
func configOptions(s *runner.Setup) []sdk.SessionConfigOption {
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
	opts := sdk.SessionConfigSelectOptionsUngrouped(choices)
	return []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{Id: configModel, Name: "Model", Type: "select",
		Category: sdk.Ptr(sdk.SessionConfigOptionCategoryModel), CurrentValue: sdk.SessionConfigValueId(current),
		Description: sdk.Ptr("The model of the next prompts (rein's --model)"),
		Options:     sdk.SessionConfigSelectOptions{Ungrouped: &opts}}}}
}

// SetSessionConfigOption switches the session's model to one of the
// choices offered, between prompts; it answers the options as they are
// now.
func (a *acpAgent) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams("rein's config option is the model, a select: send its value")
	}
	l := a.get(string(v.SessionId))
	if l == nil {
		return sdk.SetSessionConfigOptionResponse{}, unknownSession(string(v.SessionId))
	}
	if v.ConfigId != configModel {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("unknown config option %q; rein offers %q", v.ConfigId, configModel))
	}
	if !l.run.TryLock() {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidRequest("the session is running a prompt; change the model once it answers")
	}
	defer l.run.Unlock()
	offered := configOptions(l.conv.Setup())[0].Select.Options.Ungrouped
	if !slices.ContainsFunc(*offered, func(o sdk.SessionConfigSelectOption) bool { return o.Value == v.Value }) {
		var vals []string
		for _, o := range *offered {
			vals = append(vals, string(o.Value))
		}
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("model %q is not one of the choices: %s", v.Value, strings.Join(vals, ", ")))
	}
	if err := l.conv.UseModel(string(v.Value)); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("model %s: %v", v.Value, err))
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: configOptions(l.conv.Setup())}, nil
}
