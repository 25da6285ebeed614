# expect: parse-error line=3
def plan():
	'''docstring'''
	walk('kitchen')
