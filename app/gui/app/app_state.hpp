// The window's state: the document (tensor, config, history, background work; document/) plus the UI state
// of every panel and dialog. Panels get the document read-only and return intents; the frame loop applies
// them (apply_intents.hpp). Nothing here computes: the document recomputes, the panels draw.
#pragma once

#include <map>
#include <memory>

#include "gui/app/file_dialogs.hpp"
#include "gui/document/document.hpp"
#include "gui/panels/bits_panel.hpp"
#include "gui/panels/calibration_panel.hpp"
#include "gui/panels/compare_panel.hpp"
#include "gui/panels/controls_panel.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/panels/formats_panel.hpp"
#include "gui/panels/histogram_panel.hpp"
#include "gui/panels/intents.hpp"
#include "gui/panels/landscape_panel.hpp"
#include "gui/panels/lesson_panel.hpp"
#include "gui/panels/layer_panel.hpp"
#include "gui/panels/model_panel.hpp"
#include "gui/panels/presenter_view.hpp"
#include "gui/panels/safetensors_browser.hpp"
#include "gui/panels/tensor_panel.hpp"
#include "gui/platform/settings.hpp"

namespace qs::gui {

// The state of a tab that no other code reaches (a tab added in one file, analysis_tabs.hpp): made on first
// use, one per type.
class TabStates {
public:
    template <class T>
    T& get() {
        return const_cast<T&>(static_cast<const TabStates&>(*this).get<T>());
    }
    // (Made on first use here too: a session reads a tab's state through a const AppState.)
    template <class T>
    const T& get() const {
        static const char id = 0;  // one address per T
        std::shared_ptr<void>& slot = slots_[&id];
        if (!slot) slot = std::make_shared<T>();
        return *static_cast<const T*>(slot.get());
    }

private:
    mutable std::map<const void*, std::shared_ptr<void>> slots_;
};

struct AppState {
    AppState() = default;
    AppState(const AppState&) = delete;
    AppState& operator=(const AppState&) = delete;

    Document doc;
    Intents intents;  // what the panels asked for this frame; applied after they have drawn

    PanelToggles panels;
    ControlsPanelState controls;
    TensorPanelState tensor_panel;
    FigurePanelState figure;
    PresenterViewState presenter_view;    // presenter mode's cached metrics strip (the mode itself: `presenter`)
    HistogramPanelState histogram;
    LandscapePanelState landscape;
    FileDialogsState files;               // File menu: figure PNG, tensors, sessions
    SafetensorsBrowserState safetensors;  // the tensor list of an opened .safetensors or .gguf file
    CalibrationPanelState calibration;
    ComparePanelState compare;
    FormatsPanelState formats;            // every number format on the tensor: cost against error
    ModelPanelState model;                // a whole checkpoint under the current settings
    BitsPanelState bits;                  // the selected cell's code, scale and packed byte, bit by bit
    LessonPanelState lesson;              // the open lesson and its step (app/lesson_control.hpp)
    bool show_lesson_tab = false;         // bring the left column's Lesson tab to the front once
    int left_tab = 1;                     // the left column's tab: 0 lesson, 1 quantize, 2 tensor (app/left_column.hpp)
    bool left_tabs_wrapped = false;       // last frame the tabs were a wrapped row of buttons (large text)
    float presenter_lesson_scale = 0.0f;  // presenter mode: the lesson column's text scale that fits (0: not yet)
    int presenter_lesson_step = -1;       // the step it was fitted for
    // A slide's tab under the figure (main_window.cpp): the text scale it was drawn at, the factor by which it
    // had to shrink further to end on the screen (0: not yet), the height its contents take at scale 1 as last
    // measured (0: not yet), and the step they are for.
    float presenter_tab_scale = 0.0f;
    float presenter_tab_fit = 0.0f;
    float presenter_tab_height = 0.0f;
    int presenter_tab_step = -1;
    // The largest text scale the slide may still take for this step and slide size: once a height measured at
    // one scale has sent it down it does not go back up (a height measured smaller wraps less: it could swing).
    float presenter_tab_cap = 1.0f;
    float presenter_tab_width = 0.0f, presenter_tab_room = 0.0f;  // the slide size the cap is for
    LayerPanelState layer;                // the current tensor as a layer's W: from weight error to output error
    bool layer_view = false;              // View > Layer lab (--tab layer): the lab takes the right column
    TabStates tab_states;                 // the states of tabs that keep theirs to themselves
    // The tab the analysis area showed last frame (an index of AnalysisTabs()): the wide ones take the metrics'
    // column too.
    int analysis_tab = 0;
    int request_tab = -1;    // a tab (index of AnalysisTabs()) to bring to the front next frame (a model just opened)
    bool presenter = false;  // F5: the figure alone, for a projector (panels/presenter_view.hpp)
    // A lesson on a window narrow for its text is shown as a slide (main_window.cpp); View > "Lesson as a slide"
    // turns that off, for a user who wants the controls beside the lesson at a large text size.
    bool lesson_slides = true;
};

}  // namespace qs::gui
