/* Walks the descriptors of a generated translation unit (prefix `slc`) and prints them in the
 * line format tests/dml_forms.rs derives from the JSON: the C and the JSON must describe one graph. */
#include <stdio.h>
#include <DirectML.h>

extern const DML_GRAPH_DESC slc_graph;
extern const DML_OPERATOR_DESC *const slc_operators[];
extern const UINT slc_operator_count;
extern const UINT64 slc_input_offsets[];
extern const UINT64 slc_input_sizes[];
extern const DML_FEATURE_LEVEL slc_feature_level;

static void list(const char *name, const UINT *v, UINT n) {
    UINT i;
    printf(" %s", name);
    if (!v) { printf(" null"); return; }
    for (i = 0; i < n; i++) printf(" %u", v[i]);
}

static void tensor(const char *name, const DML_TENSOR_DESC *t) {
    const DML_BUFFER_TENSOR_DESC *b = (const DML_BUFFER_TENSOR_DESC *)t->Desc;
    printf("  %s type %d data %d flags %d dims %u", name, (int)t->Type, (int)b->DataType, (int)b->Flags, b->DimensionCount);
    list("sizes", b->Sizes, b->DimensionCount);
    list("strides", b->Strides, b->DimensionCount);
    printf(" total %llu align %u\n", b->TotalTensorSizeInBytes, b->GuaranteedBaseOffsetAlignment);
}

int main(void) {
    UINT n, i;
    printf("level %d nodes %u inputs %u outputs %u\n", (int)slc_feature_level, slc_graph.NodeCount, slc_graph.InputCount, slc_graph.OutputCount);
    for (n = 0; n < slc_operator_count; n++) {
        const DML_OPERATOR_DESC *op = slc_operators[n];
        printf("node %u op %d\n", n, (int)op->Type);
        if (op->Type == DML_OPERATOR_SLICE1) {
            const DML_SLICE1_OPERATOR_DESC *d = (const DML_SLICE1_OPERATOR_DESC *)op->Desc;
            tensor("InputTensor", d->InputTensor);
            tensor("OutputTensor", d->OutputTensor);
            printf("  window dims %u", d->DimensionCount);
            list("offsets", d->InputWindowOffsets, d->DimensionCount);
            list("sizes", d->InputWindowSizes, d->DimensionCount);
            printf(" strides");
            for (i = 0; i < d->DimensionCount; i++) printf(" %d", d->InputWindowStrides[i]);
            printf("\n");
        } else if (op->Type == DML_OPERATOR_GATHER) {
            const DML_GATHER_OPERATOR_DESC *d = (const DML_GATHER_OPERATOR_DESC *)op->Desc;
            tensor("InputTensor", d->InputTensor);
            tensor("IndicesTensor", d->IndicesTensor);
            tensor("OutputTensor", d->OutputTensor);
            printf("  axis %u indexdims %u\n", d->Axis, d->IndexDimensions);
        } else if (op->Type == DML_OPERATOR_GATHER_ELEMENTS) {
            const DML_GATHER_ELEMENTS_OPERATOR_DESC *d = (const DML_GATHER_ELEMENTS_OPERATOR_DESC *)op->Desc;
            tensor("InputTensor", d->InputTensor);
            tensor("IndicesTensor", d->IndicesTensor);
            tensor("OutputTensor", d->OutputTensor);
            printf("  axis %u\n", d->Axis);
        } else if (op->Type == DML_OPERATOR_GATHER_ND1) {
            const DML_GATHER_ND1_OPERATOR_DESC *d = (const DML_GATHER_ND1_OPERATOR_DESC *)op->Desc;
            tensor("InputTensor", d->InputTensor);
            tensor("IndicesTensor", d->IndicesTensor);
            tensor("OutputTensor", d->OutputTensor);
            printf("  counts %u %u %u\n", d->InputDimensionCount, d->IndicesDimensionCount, d->BatchDimensionCount);
        } else if (op->Type == DML_OPERATOR_SCATTER) {
            const DML_SCATTER_OPERATOR_DESC *d = (const DML_SCATTER_OPERATOR_DESC *)op->Desc;
            tensor("InputTensor", d->InputTensor);
            tensor("IndicesTensor", d->IndicesTensor);
            tensor("UpdatesTensor", d->UpdatesTensor);
            tensor("OutputTensor", d->OutputTensor);
            printf("  axis %u\n", d->Axis);
        } else if (op->Type == DML_OPERATOR_SCATTER_ND) {
            const DML_SCATTER_ND_OPERATOR_DESC *d = (const DML_SCATTER_ND_OPERATOR_DESC *)op->Desc;
            tensor("InputTensor", d->InputTensor);
            tensor("IndicesTensor", d->IndicesTensor);
            tensor("UpdatesTensor", d->UpdatesTensor);
            tensor("OutputTensor", d->OutputTensor);
            printf("  counts %u %u\n", d->InputDimensionCount, d->IndicesDimensionCount);
        }
    }
    for (i = 0; i < slc_graph.InputEdgeCount; i++) {
        const DML_INPUT_GRAPH_EDGE_DESC *e = (const DML_INPUT_GRAPH_EDGE_DESC *)slc_graph.InputEdges[i].Desc;
        printf("input %d %u %u %u %s offset %llu size %llu\n", (int)slc_graph.InputEdges[i].Type, e->GraphInputIndex, e->ToNodeIndex, e->ToNodeInputIndex, e->Name, slc_input_offsets[e->GraphInputIndex], slc_input_sizes[e->GraphInputIndex]);
    }
    for (i = 0; i < slc_graph.IntermediateEdgeCount; i++) {
        const DML_INTERMEDIATE_GRAPH_EDGE_DESC *e = (const DML_INTERMEDIATE_GRAPH_EDGE_DESC *)slc_graph.IntermediateEdges[i].Desc;
        printf("intermediate %d %u %u %u %u\n", (int)slc_graph.IntermediateEdges[i].Type, e->FromNodeIndex, e->FromNodeOutputIndex, e->ToNodeIndex, e->ToNodeInputIndex);
    }
    for (i = 0; i < slc_graph.OutputEdgeCount; i++) {
        const DML_OUTPUT_GRAPH_EDGE_DESC *e = (const DML_OUTPUT_GRAPH_EDGE_DESC *)slc_graph.OutputEdges[i].Desc;
        printf("output %d %u %u %u\n", (int)slc_graph.OutputEdges[i].Type, e->FromNodeIndex, e->FromNodeOutputIndex, e->GraphOutputIndex);
    }
    return 0;
}
