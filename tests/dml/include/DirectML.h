/* A minimal stand-in for directml.h: only the declarations slc's generated C uses, with the
 * field order and enum values of the Windows SDK header, and its DML_TARGET_VERSION guards, so
 * that generated C which uses a declaration its feature level lacks fails to compile here too.
 * IMPORTANT: keep in sync with src/backend/dml/desc.rs. */
#ifndef SLC_MINIMAL_DIRECTML_H
#define SLC_MINIMAL_DIRECTML_H

/* As directml.h when no Windows target is set (the redistributable): the newest version. */
#ifndef DML_TARGET_VERSION
#define DML_TARGET_VERSION 0x6400
#endif

typedef unsigned int UINT;
typedef int INT;
typedef unsigned long long UINT64;
typedef long long INT64;
typedef int INT32;
typedef short INT16;
typedef signed char INT8;
typedef unsigned short UINT16;
typedef unsigned char UINT8;

typedef struct IDMLOperator IDMLOperator;

typedef enum DML_TENSOR_DATA_TYPE {
    DML_TENSOR_DATA_TYPE_UNKNOWN = 0,
    DML_TENSOR_DATA_TYPE_FLOAT32 = 1,
    DML_TENSOR_DATA_TYPE_FLOAT16 = 2,
    DML_TENSOR_DATA_TYPE_UINT32 = 3,
    DML_TENSOR_DATA_TYPE_UINT16 = 4,
    DML_TENSOR_DATA_TYPE_UINT8 = 5,
    DML_TENSOR_DATA_TYPE_INT32 = 6,
    DML_TENSOR_DATA_TYPE_INT16 = 7,
    DML_TENSOR_DATA_TYPE_INT8 = 8,
    DML_TENSOR_DATA_TYPE_FLOAT64 = 9,
    DML_TENSOR_DATA_TYPE_UINT64 = 10,
    DML_TENSOR_DATA_TYPE_INT64 = 11
} DML_TENSOR_DATA_TYPE;

typedef enum DML_TENSOR_TYPE { DML_TENSOR_TYPE_INVALID = 0, DML_TENSOR_TYPE_BUFFER = 1 } DML_TENSOR_TYPE;

typedef enum DML_TENSOR_FLAGS { DML_TENSOR_FLAG_NONE = 0x0, DML_TENSOR_FLAG_OWNED_BY_DML = 0x1 } DML_TENSOR_FLAGS;

typedef enum DML_OPERATOR_TYPE {
    DML_OPERATOR_INVALID = 0,
    DML_OPERATOR_GATHER = 67,
#if DML_TARGET_VERSION >= 0x2000
    DML_OPERATOR_SCATTER_ELEMENTS = 94,
    DML_OPERATOR_SCATTER = DML_OPERATOR_SCATTER_ELEMENTS,
#endif
#if DML_TARGET_VERSION >= 0x2100
    DML_OPERATOR_GATHER_ELEMENTS = 107,
    DML_OPERATOR_SCATTER_ND = 109,
    DML_OPERATOR_SLICE1 = 111,
#endif
#if DML_TARGET_VERSION >= 0x3000
    DML_OPERATOR_GATHER_ND1 = 140,
#endif
} DML_OPERATOR_TYPE;

#if DML_TARGET_VERSION >= 0x2000
typedef enum DML_FEATURE_LEVEL {
    DML_FEATURE_LEVEL_1_0 = 0x1000,
    DML_FEATURE_LEVEL_2_0 = 0x2000,
    DML_FEATURE_LEVEL_2_1 = 0x2100,
    DML_FEATURE_LEVEL_3_0 = 0x3000,
    DML_FEATURE_LEVEL_3_1 = 0x3100,
    DML_FEATURE_LEVEL_4_0 = 0x4000,
    DML_FEATURE_LEVEL_4_1 = 0x4100,
    DML_FEATURE_LEVEL_5_0 = 0x5000
} DML_FEATURE_LEVEL;
#endif /* DML_TARGET_VERSION >= 0x2000 */

#if DML_TARGET_VERSION >= 0x2100
typedef enum DML_GRAPH_NODE_TYPE { DML_GRAPH_NODE_TYPE_INVALID = 0, DML_GRAPH_NODE_TYPE_OPERATOR = 1 } DML_GRAPH_NODE_TYPE;

typedef enum DML_GRAPH_EDGE_TYPE {
    DML_GRAPH_EDGE_TYPE_INVALID = 0,
    DML_GRAPH_EDGE_TYPE_INPUT = 1,
    DML_GRAPH_EDGE_TYPE_OUTPUT = 2,
    DML_GRAPH_EDGE_TYPE_INTERMEDIATE = 3
} DML_GRAPH_EDGE_TYPE;
#endif /* DML_TARGET_VERSION >= 0x2100 */

typedef struct DML_BUFFER_TENSOR_DESC {
    DML_TENSOR_DATA_TYPE DataType;
    DML_TENSOR_FLAGS Flags;
    UINT DimensionCount;
    const UINT *Sizes;
    const UINT *Strides;
    UINT64 TotalTensorSizeInBytes;
    UINT GuaranteedBaseOffsetAlignment;
} DML_BUFFER_TENSOR_DESC;

typedef struct DML_TENSOR_DESC {
    DML_TENSOR_TYPE Type;
    const void *Desc;
} DML_TENSOR_DESC;

typedef struct DML_OPERATOR_DESC {
    DML_OPERATOR_TYPE Type;
    const void *Desc;
} DML_OPERATOR_DESC;

#if DML_TARGET_VERSION >= 0x2100
typedef struct DML_SLICE1_OPERATOR_DESC {
    const DML_TENSOR_DESC *InputTensor;
    const DML_TENSOR_DESC *OutputTensor;
    UINT DimensionCount;
    const UINT *InputWindowOffsets;
    const UINT *InputWindowSizes;
    const INT *InputWindowStrides;
} DML_SLICE1_OPERATOR_DESC;
#endif /* DML_TARGET_VERSION >= 0x2100 */

typedef struct DML_GATHER_OPERATOR_DESC {
    const DML_TENSOR_DESC *InputTensor;
    const DML_TENSOR_DESC *IndicesTensor;
    const DML_TENSOR_DESC *OutputTensor;
    UINT Axis;
    UINT IndexDimensions;
} DML_GATHER_OPERATOR_DESC;

#if DML_TARGET_VERSION >= 0x2100
typedef struct DML_GATHER_ELEMENTS_OPERATOR_DESC {
    const DML_TENSOR_DESC *InputTensor;
    const DML_TENSOR_DESC *IndicesTensor;
    const DML_TENSOR_DESC *OutputTensor;
    UINT Axis;
} DML_GATHER_ELEMENTS_OPERATOR_DESC;
#endif /* DML_TARGET_VERSION >= 0x2100 */

#if DML_TARGET_VERSION >= 0x2000
typedef struct DML_SCATTER_OPERATOR_DESC {
    const DML_TENSOR_DESC *InputTensor;
    const DML_TENSOR_DESC *IndicesTensor;
    const DML_TENSOR_DESC *UpdatesTensor;
    const DML_TENSOR_DESC *OutputTensor;
    UINT Axis;
} DML_SCATTER_OPERATOR_DESC;
#endif /* DML_TARGET_VERSION >= 0x2000 */

#if DML_TARGET_VERSION >= 0x2100
typedef struct DML_SCATTER_ND_OPERATOR_DESC {
    const DML_TENSOR_DESC *InputTensor;
    const DML_TENSOR_DESC *IndicesTensor;
    const DML_TENSOR_DESC *UpdatesTensor;
    const DML_TENSOR_DESC *OutputTensor;
    UINT InputDimensionCount;
    UINT IndicesDimensionCount;
} DML_SCATTER_ND_OPERATOR_DESC;
#endif /* DML_TARGET_VERSION >= 0x2100 */

#if DML_TARGET_VERSION >= 0x3000
typedef struct DML_GATHER_ND1_OPERATOR_DESC {
    const DML_TENSOR_DESC *InputTensor;
    const DML_TENSOR_DESC *IndicesTensor;
    const DML_TENSOR_DESC *OutputTensor;
    UINT InputDimensionCount;
    UINT IndicesDimensionCount;
    UINT BatchDimensionCount;
} DML_GATHER_ND1_OPERATOR_DESC;
#endif /* DML_TARGET_VERSION >= 0x3000 */

/* The graph API: DirectML 1.1, declared from DML_TARGET_VERSION 0x2100 on. */
#if DML_TARGET_VERSION >= 0x2100

typedef struct DML_OPERATOR_GRAPH_NODE_DESC {
    IDMLOperator *Operator;
    const char *Name;
} DML_OPERATOR_GRAPH_NODE_DESC;

typedef struct DML_GRAPH_NODE_DESC {
    DML_GRAPH_NODE_TYPE Type;
    const void *Desc;
} DML_GRAPH_NODE_DESC;

typedef struct DML_INPUT_GRAPH_EDGE_DESC {
    UINT GraphInputIndex;
    UINT ToNodeIndex;
    UINT ToNodeInputIndex;
    const char *Name;
} DML_INPUT_GRAPH_EDGE_DESC;

typedef struct DML_OUTPUT_GRAPH_EDGE_DESC {
    UINT FromNodeIndex;
    UINT FromNodeOutputIndex;
    UINT GraphOutputIndex;
    const char *Name;
} DML_OUTPUT_GRAPH_EDGE_DESC;

typedef struct DML_INTERMEDIATE_GRAPH_EDGE_DESC {
    UINT FromNodeIndex;
    UINT FromNodeOutputIndex;
    UINT ToNodeIndex;
    UINT ToNodeInputIndex;
    const char *Name;
} DML_INTERMEDIATE_GRAPH_EDGE_DESC;

typedef struct DML_GRAPH_EDGE_DESC {
    DML_GRAPH_EDGE_TYPE Type;
    const void *Desc;
} DML_GRAPH_EDGE_DESC;

typedef struct DML_GRAPH_DESC {
    UINT InputCount;
    UINT OutputCount;
    UINT NodeCount;
    const DML_GRAPH_NODE_DESC *Nodes;
    UINT InputEdgeCount;
    const DML_GRAPH_EDGE_DESC *InputEdges;
    UINT OutputEdgeCount;
    const DML_GRAPH_EDGE_DESC *OutputEdges;
    UINT IntermediateEdgeCount;
    const DML_GRAPH_EDGE_DESC *IntermediateEdges;
} DML_GRAPH_DESC;
#endif /* DML_TARGET_VERSION >= 0x2100 */

#endif
