# The catalogue of known mistakes and valid alternatives (README.md in this folder): one
# runner each. Add a new file's name here.
include(${CMAKE_CURRENT_LIST_DIR}/mistakes.cmake)

foreach(name
    # cache-structure
    transposed_layout off_by_one_growth kv_swapped key_transposed value_reads_keys rows_reversed
    clone_loses_length snapshot_position_major snapshot_shape_order clone_copies_last_cache
    append_to_last_cache
    # multi-layer-cache
    shared_layers length_counts_all_layers shallow_clone clone_empty clone_only_first_layer
    clone_layers_reversed shape_row_field_order clone_appends_to_original
    # one-token
    masked_decode missing_scale scale_sqrt_d_model append_after_attention double_append
    append_some_layers position_not_continuing dot_four_sums weighted_sum_reversed
    head0_keys_for_every_head values_read_from_keys every_layer_reads_layer0 q_k_swapped
    logits_of_last_step_only decode_calls_forward std_exp
    # prefill
    prefill_no_mask mask_off_by_one causal_ignores_cached_past prefill_rows_reversed
    prefill_logits_of_first_row positions_restart
    # prefix-reuse
    reuse_no_clone continue_from_empty_cache continue_from_previous continuation_recomputes_prefix
    saved_rows_read_from_continuation
    # rollback
    crop_keeps_last crop_one_layer crop_keeps_stale_rows speculate_on_shared_copy crop_accepted_off_by_one
    crop_last_cache
    # paged-cache
    no_copy_on_write new_block_one_early release_leaks_blocks release_frees_shared contiguous_table
    # prefix-cache
    key_without_parent cache_partial_block evict_lowest_block prefill_whole_prompt
    # continuous-batching
    batch_attends_first_sequence batch_positions_from_index decode_finished retire_without_release
    admit_by_free_blocks_only admit_one_position_more
    # generate
    generate_recomputes_each_step generate_feeds_last_token generate_prompt_token_twice
    generate_feeds_first_token generate_on_saved_cache generate_recomputes_prefix
    greedy_last_maximum)
  kvcourse_mistake(${name})
endforeach()

foreach(name
    # one-token
    divide_by_eight scale_folded_into_q weighted_sum_by_hand
    # prefill
    masked_left_out mask_large_negative prefill_by_decode_steps)
  kvcourse_alternative(${name})
endforeach()

# The fixture generator runs every one of them (grader/gen/mistake_runs.hpp).
get_property(variant_runners GLOBAL PROPERTY KVCOURSE_VARIANT_RUNNERS)
if(TARGET fixtures)
  add_dependencies(fixtures ${variant_runners})
endif()

# A runner that crashes, hangs, exits, throws or prints on request (cli_test.cpp).
add_course_runner(misbehaving ${CMAKE_CURRENT_LIST_DIR}/misbehaving_adapters.cpp LIBS course_reference)
