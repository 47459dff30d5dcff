"""How good a suite is at catching what goes wrong (``docs/suite-quality.md``): the behaviour
coverage of its runs, mutants of the system under test it kills or lets survive, LLM
judges that can be shown to fail, and judges calibrated against people's labels. The modules
are private; these are the names to import."""

from agentkit.quality._calibration import (
    Agreement,
    Calibration,
    CalibrationStatus,
    ItemVerdict,
    JudgeCalibration,
    calibrate,
    calibration_of,
    judge_calibration,
    judges_folder,
    labels_in,
)
from agentkit.quality._coverage import (
    BEHAVIOURS,
    Coverage,
    Exercised,
    ToolCoverage,
    ToolUse,
    argument_shape,
    coverage_of,
    judged_fields,
    merged_coverage,
    output_used,
)
from agentkit.quality._judges import BadAnswer, JudgeTrial, judge_trials, known_bad
from agentkit.quality._labels import (
    DEFAULT_MIN_KAPPA,
    LABELS_SUFFIX,
    LabelledCall,
    LabelledItem,
    LabelledTurn,
    Labels,
    LabelsError,
    cassette_of,
    load_labels,
)
from agentkit.quality._mutants import (
    OPERATORS,
    Baseline,
    Kill,
    Mutant,
    MutantResult,
    Mutation,
    baseline,
    corrupted,
    mutants_of,
    mutate,
)

__all__ = ["BadAnswer", "JudgeTrial", "judge_trials", "known_bad", "OPERATORS", "Baseline",
           "Kill", "Mutant", "MutantResult", "Mutation", "baseline", "corrupted", "mutants_of",
           "mutate", "BEHAVIOURS", "Coverage", "Exercised", "ToolCoverage", "ToolUse",
           "argument_shape", "coverage_of", "judged_fields", "merged_coverage", "output_used",
           "Agreement", "Calibration", "CalibrationStatus", "ItemVerdict", "JudgeCalibration",
           "calibrate", "calibration_of", "judge_calibration", "judges_folder", "labels_in",
           "DEFAULT_MIN_KAPPA", "LABELS_SUFFIX",
           "LabelledCall", "LabelledItem", "LabelledTurn", "Labels", "LabelsError",
           "cassette_of", "load_labels"]
